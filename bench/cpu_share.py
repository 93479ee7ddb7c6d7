"""CPU used by each kind of process on this machine between two snapshots of /proc.

    python bench/cpu_share.py snap FILE
    python bench/cpu_share.py diff BEFORE AFTER SECONDS APP_PID LOAD_PARENT_PID

Shows how the cores were shared during a run: the app under test (the gunicorn master APP_PID and
its workers), the load generator (wrk processes started by LOAD_PARENT_PID), PostgreSQL and Redis
(all their processes, whoever they serve) and everything else on the machine, so a figure taken
while other work ran can be told apart from one taken on a quiet machine.
"""

import json
import os
import sys
from collections import Counter
from collections.abc import Mapping

Snapshot = dict[str, dict[str, object]]


def snapshot() -> Snapshot:
    tick = os.sysconf("SC_CLK_TCK")
    processes: Snapshot = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        processes[pid] = {
            "comm": comm,
            "ppid": fields[1],
            "cpu": (int(fields[11]) + int(fields[12])) / tick,
            "start": fields[19],
        }
    return processes


def _descendants(processes: Snapshot, roots: set[str]) -> set[str]:
    found = set(roots)
    grew = True
    while grew:
        children = {pid for pid, p in processes.items() if p["ppid"] in found} - found
        grew = bool(children)
        found |= children
    return found


def cpu_used(
    before: Snapshot, after: Snapshot, groups: Mapping[str, int], load_parent: int
) -> Counter[str]:
    """CPU seconds between the snapshots by kind: each of ``groups`` (a name and the pid of a
    process tree: the app, its worker), "wrk" (started by ``load_parent``), "postgres",
    "redis" and "other" (everything else on the machine)."""
    trees = {name: _descendants(after, {str(pid)}) for name, pid in groups.items()}
    used: Counter[str] = Counter()
    for pid, process in after.items():
        previous = before.get(pid)
        start_cpu = previous["cpu"] if previous and previous["start"] == process["start"] else 0
        comm = str(process["comm"])
        kind = next((name for name, tree in trees.items() if pid in tree), None)
        if kind is None:
            if comm == "wrk" and process["ppid"] == str(load_parent):
                kind = "wrk"
            elif comm.startswith("postgres"):
                kind = "postgres"
            elif comm.startswith("redis"):
                kind = "redis"
            else:
                kind = "other"
        used[kind] += max(0.0, float(process["cpu"]) - float(start_cpu))
    return used


def _diff(
    before_path: str, after_path: str, seconds: float, app_pid: str, load_parent: str
) -> None:
    with open(before_path) as before_file, open(after_path) as after_file:
        before, after = json.load(before_file), json.load(after_file)
    used = cpu_used(before, after, {"app": int(app_pid)}, int(load_parent))
    order = ["app", "postgres", "redis", "wrk", "other"]
    parts = [f"{kind} {used[kind] / seconds:.2f}" for kind in order]
    print(
        f"CPU cores used over {seconds:.0f} s (of {os.cpu_count()}): " + ", ".join(parts),
        "(app: this gunicorn; postgres, redis: all their processes; other: the rest)",
    )


if __name__ == "__main__":
    if sys.argv[1] == "snap":
        with open(sys.argv[2], "w") as out:
            json.dump(snapshot(), out)
    else:
        _diff(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6])
