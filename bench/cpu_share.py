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


def snap(path: str) -> None:
    tick = os.sysconf("SC_CLK_TCK")
    processes: dict[str, dict[str, object]] = {}
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
    with open(path, "w") as out:
        json.dump(processes, out)


def _kind(pid: str, process: dict, app: set[str], load_parent: str) -> str:
    comm = str(process["comm"])
    if pid in app:
        return "app"
    if comm == "wrk" and process["ppid"] == load_parent:
        return "wrk"
    if comm.startswith("postgres"):
        return "postgres"
    if comm.startswith("redis"):
        return "redis"
    return "other"


def diff(before_path: str, after_path: str, seconds: float, app_pid: str, load_parent: str) -> None:
    with open(before_path) as before_file, open(after_path) as after_file:
        before, after = json.load(before_file), json.load(after_file)
    app = {app_pid}
    grew = True
    while grew:
        children = {pid for pid, p in after.items() if p["ppid"] in app} - app
        grew = bool(children)
        app |= children
    used: Counter[str] = Counter()
    for pid, process in after.items():
        previous = before.get(pid)
        start_cpu = previous["cpu"] if previous and previous["start"] == process["start"] else 0
        used[_kind(pid, process, app, load_parent)] += max(0.0, process["cpu"] - start_cpu)
    order = ["app", "postgres", "redis", "wrk", "other"]
    parts = [f"{kind} {used[kind] / seconds:.2f}" for kind in order]
    print(
        f"CPU cores used over {seconds:.0f} s (of {os.cpu_count()}): " + ", ".join(parts),
        "(app: this gunicorn; postgres, redis: all their processes; other: the rest)",
    )


if __name__ == "__main__":
    if sys.argv[1] == "snap":
        snap(sys.argv[2])
    else:
        diff(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6])
