"""``bench/run --only pipeline`` (issue 43): the whole buy, from its request to its last webhook,
against the least pipeline a buy must go through (the pipeline limit: bench/limitapp/pipeline.py),
side by side in one run.

For each side, a load of buys (wrk, as every scenario; each buy of another listing), then until
the receiver (bench/receiver.py) has the ``trade.pending`` webhook (or ``trade.failed``) of every
buy the load created: buys completed end to end per second, from the first request to the last
webhook received, and the CPU each kind of process used over that time per buy. Then the
service again, paced at ``PACED_SHARE`` of its end-to-end rate (a load it sustains), for the p99
of ``POST /secure/buy`` there; under the saturating load the p99 is the queue's (Little's law).

PostgreSQL's CPU is that of the bench database's backends and of PostgreSQL's own background
processes (the WAL writer, the checkpointer...), not other databases' backends (other work on a
shared machine), nor this process's own connections (its counts while waiting for the drain).
"""

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace

from cpu_share import Snapshot, cpu_used, snapshot
from harness import Request, Result, drive, load_average
from limits import limit_worker, pipeline_lines
from tradedata import RECEIVER_PORT, buy_requests, buyers, untaken_listings

CONNECTIONS = 32  # wrk's, as every scenario of the suite
WARMUP_SECONDS = 3  # a load of its own per side, drained before the measured one
PACED_SHARE = 0.8  # of the service's end-to-end rate: the load the p99 is measured at
DRAIN_DEADLINE_SECONDS = 600
# The drain is over once every buy the load made has its last webhook and no buy came in for
# this long (requests in flight when wrk stopped still commit).
QUIET_SECONDS = 2
SERVICE_HOOKS, LIMIT_HOOKS = "/hooks", "/limit-hooks"  # the receiver's paths (tradedata.buyers)
SERVICE_BUYERS = 20  # as the buy scenario's (suite_data.cast_create)
# What a buy's pipeline ends with, per side: the trade pending (bought, the merchant told), or
# failed (the purchase could not be made).
DONE, FAILED = "trade.pending", "trade.failed"
TARGET_SHARE = 0.5  # issue 43: the service at least half the limit's rate end to end
TARGET_WEB_MS = 6.0  # the request's web CPU per buy
TARGET_P99_MS = 150.0
# The kinds of process each run's CPU is split into, as the tables show them.
KINDS = ("web", "worker", "postgres", "redis", "receiver")


@dataclass(frozen=True)
class Side:
    """One of the two pipelines, as a load drives it and the drain watches it."""

    label: str
    base_url: str
    hooks: str  # the receiver's path its webhooks go to
    created: Callable[[], int]  # buys the database holds, counted
    trees: dict[str, int]  # process trees by kind: its web and worker, the other side's


@dataclass(frozen=True)
class Run:
    label: str
    result: Result  # wrk's
    created: int  # buys the load made (rows)
    done: int  # of which completed end to end
    failed: int
    load_seconds: float  # the load's length
    seconds: float  # from the first request to the last webhook
    cpu: dict[str, float]  # seconds over that time, by kind of process
    load_before: float
    load_after: float

    @property
    def per_second(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0

    def ms_per_buy(self, kind: str) -> float:
        return 1000 * self.cpu.get(kind, 0.0) / self.done if self.done else 0.0

    def row(self) -> str:
        r = self.result
        total = sum(self.ms_per_buy(kind) for kind in KINDS)
        return (
            f"| {self.label} | {self.done} ({self.failed} failed) | {r.rps:.0f} "
            f"| {self.load_seconds:.1f} | {self.seconds - self.load_seconds:.1f} "
            f"| **{self.per_second:.1f}** | {r.p50_ms:.1f} | {r.p99_ms:.1f} | "
            + " | ".join(f"{self.ms_per_buy(kind):.1f}" for kind in KINDS)
            + f" | {total:.1f} | {self.cpu.get('wrk', 0) / self.seconds:.2f} "
            f"| {self.cpu.get('other', 0) / self.seconds:.2f} "
            f"| {self.load_before:.1f} → {self.load_after:.1f} |"
        )


def received(path: str) -> dict[str, tuple[int, float]]:
    """What the receiver got on ``path`` so far: {event type: (count, last arrival)}."""
    with urllib.request.urlopen(f"http://127.0.0.1:{RECEIVER_PORT}/stats", timeout=5) as answer:
        stats = json.load(answer)
    return {kind: (int(count), float(last)) for kind, (count, last) in stats.get(path, {}).items()}


def _ended(
    before: dict[str, tuple[int, float]], after: dict[str, tuple[int, float]]
) -> tuple[int, int, float]:
    """(completed, failed, the last one's arrival) between two of ``received``'s answers."""
    counts = [
        after.get(kind, (0, 0.0))[0] - before.get(kind, (0, 0.0))[0] for kind in (DONE, FAILED)
    ]
    last = max(after.get(kind, (0, 0.0))[1] for kind in (DONE, FAILED))
    return counts[0], counts[1], last


def _drained(
    side: Side, created_before: int, seen: dict[str, tuple[int, float]]
) -> tuple[int, int, int, float, Snapshot]:
    """Waits until every buy made since ``created_before`` ended: (created, completed, failed,
    the last webhook's arrival, the processes' CPU when the last had arrived)."""
    deadline = time.monotonic() + DRAIN_DEADLINE_SECONDS
    quiet: tuple[float, Snapshot] | None = None
    last_created = -1
    while time.monotonic() < deadline:
        done, failed, last = _ended(seen, received(side.hooks))
        # The database is asked only once the receiver has as many: its count costs CPU.
        created = side.created() - created_before if done + failed >= last_created else last_created
        if done + failed >= created and created == last_created:
            quiet = quiet or (time.monotonic(), snapshot())
            if time.monotonic() - quiet[0] >= QUIET_SECONDS:
                return created, done, failed, last, quiet[1]
        else:
            quiet = None
        last_created = created
        time.sleep(0.2)
    raise RuntimeError(f"{side.label}: the pipeline did not drain in {DRAIN_DEADLINE_SECONDS} s")


def _backends() -> tuple[set[str], set[str]]:
    """PostgreSQL's processes of this run (the bench database's backends and the background
    processes), and this process's own connections."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, pid = pg_backend_pid() FROM pg_stat_activity"
            " WHERE datname = current_database() OR datname IS NULL"
        )
        rows = cursor.fetchall()
    return {str(pid) for pid, _ in rows}, {str(pid) for pid, own in rows if own}


def _pids_cpu(before: Snapshot, after: Snapshot, pids: set[str]) -> float:
    used = 0.0
    for pid in pids & after.keys():
        was = before.get(pid)
        start = float(was["cpu"]) if was and was["start"] == after[pid]["start"] else 0.0  # type: ignore[arg-type]
        used += float(after[pid]["cpu"]) - start  # type: ignore[arg-type]
    return used


def run_side(
    side: Side,
    lines: list[Request],
    seconds: int,
    *,
    connections: int = CONNECTIONS,
    delay_ms: float | None = None,
    profiler: Callable[[], subprocess.Popen[bytes] | None] | None = None,
) -> Run:
    """One load and its drain, measured."""
    created_before = side.created()
    seen = received(side.hooks)
    ours, own = _backends()
    load_before = load_average()[0]
    before = snapshot()
    started = time.time()
    children_before = os.times()
    profiling = profiler() if profiler is not None else None
    result = drive(
        side.base_url,
        side.label,
        lines,
        seconds=seconds,
        connections=connections,
        warmup_seconds=0,
        delay_ms=delay_ms,
    )
    load_ended = time.time()
    # wrk has ended (and been waited for): its CPU is no longer in /proc, but in this process's
    # children's times.
    children = os.times()
    wrk = (
        children.children_user
        + children.children_system
        - children_before.children_user
        - children_before.children_system
    )
    if profiling is not None:
        profiling.wait()
    created, done, failed, last, after = _drained(side, created_before, seen)
    ended_ours, ended_own = _backends()
    used = cpu_used(before, after, side.trees, os.getpid())
    postgres = _pids_cpu(before, after, (ours | ended_ours) - own - ended_own)
    cpu = {kind: used.get(kind, 0.0) for kind in KINDS}
    cpu["postgres"], cpu["wrk"] = postgres, wrk
    cpu["other"] = (
        used.get("other", 0.0)
        + used.get("postgres", 0.0)
        - postgres
        + sum(cpu_seconds for kind, cpu_seconds in used.items() if kind.startswith("idle"))
    )
    return Run(
        label=side.label,
        result=result,
        created=created,
        done=done,
        failed=failed,
        load_seconds=load_ended - started,
        seconds=max(last, load_ended) - started,
        cpu=cpu,
        load_before=load_before,
        load_after=load_average()[0],
    )


# gunicorn closes a keep-alive connection idle for 2 s (its default ``keepalive``), and wrk, when
# a connection closes while it waits to send, sends twice on the new one: a paced connection
# waits at most (twice its mean) this long.
PACED_MAX_WAIT_SECONDS = 1.2


def paced_connections(rate: float) -> int:
    """How many connections wrk paces ``rate`` requests a second over: each waits a mean of
    connections / rate between requests, at most ``PACED_MAX_WAIT_SECONDS``."""
    return max(2, min(CONNECTIONS, int(rate * PACED_MAX_WAIT_SECONDS / 2)))


def _receiver_pid() -> int:
    """bench/receiver.py, which this process started (harness.receiver)."""
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                parent = stat.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read()
        except OSError:
            continue
        if parent == str(os.getpid()) and b"receiver.py" in argv:
            return int(pid)
    raise RuntimeError("bench/receiver.py is not running")


def _service_created(merchant_ids: list[str]) -> Callable[[], int]:
    def created() -> int:
        from trading.models import Trade

        return Trade.objects.filter(merchant_id__in=merchant_ids).count()

    return created


def _limit_created() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM bench_limit_trade")
        (count,) = cursor.fetchone()
    return int(count)


@dataclass(frozen=True)
class Pipeline:
    limit: Run
    service: Run
    paced: Run
    paced_rate: float  # what the paced load asked for, buys a second

    @property
    def share(self) -> float:
        return self.service.per_second / self.limit.per_second if self.limit.per_second else 0.0

    def last_line(self) -> str:
        return (
            f"pipeline: the service {self.service.per_second:.0f} buys/s end to end, "
            f"{100 * self.share:.0f} % of the limit's {self.limit.per_second:.0f}"
        )

    def markdown(self) -> list[str]:
        web = self.service.ms_per_buy("web")
        p99 = self.paced.result.p99_ms
        limit_cpu, service_cpu = (
            sum(run.ms_per_buy(kind) for kind in KINDS) for run in (self.limit, self.service)
        )
        return [
            "## The buy end to end against the pipeline limit (issue 43)",
            "",
            "Each side: a load of buys (wrk, 32 connections), then until the receiver has every "
            "buy's last webhook (`trade.pending`). Buys/s end to end: buys completed over the "
            "time from the first request to the last webhook. CPU ms per buy over that time, "
            "by kind of process (PostgreSQL: the bench database's backends and PostgreSQL's "
            "background processes). The paced row: the service at "
            f"{PACED_SHARE:.0%} of its end-to-end rate ({self.paced_rate:.0f} buys/s asked), "
            "for the p99 of a load the machine sustains.",
            "",
            "| run | buys completed | req/s | load s | last webhook after the load, s "
            "| end to end buys/s | POST p50 ms | POST p99 ms | web ms/buy | worker ms/buy "
            "| PostgreSQL ms/buy | Redis ms/buy | receiver ms/buy | all ms/buy | wrk cores "
            "| other cores | load average |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
            self.limit.row(),
            self.service.row(),
            self.paced.row(),
            "",
            f"- CPU per buy end to end, every kind of process above: the service "
            f"{service_cpu:.1f} ms, the limit {limit_cpu:.1f} ms: the service would make "
            f"{limit_cpu / service_cpu if service_cpu else 0:.0%} of the limit's rate on a machine "
            "whose cores bound both (the rates above also carry what other work took of them)",
            f"- the service >= {TARGET_SHARE:.0%} of the limit end to end: "
            f"{'yes' if self.share >= TARGET_SHARE else '**no**'} ({self.share:.0%})",
            f"- the request's web CPU per buy <= {TARGET_WEB_MS:.0f} ms: "
            f"{'yes' if web <= TARGET_WEB_MS else '**no**'} ({web:.1f} ms)",
            f"- p99 of POST /secure/buy < {TARGET_P99_MS:.0f} ms at {self.paced.result.rps:.0f} "
            f"buys/s: {'yes' if p99 < TARGET_P99_MS else '**no**'} ({p99:.0f} ms)",
        ]


def pipeline_measure(
    *,
    service_url: str,
    service_trees: dict[str, int],
    limit_url: str,
    limit_web: int,
    callback_url: str,
    prefix: str,
    seconds: int,
    lift: Callable[[list[str]], None],
    profiler: Callable[[], subprocess.Popen[bytes] | None] | None = None,
) -> Pipeline:
    """Both sides, the limit first; the service's buyers made here (``prefix``), so that their
    trades are this scenario's alone. ``lift`` lifts merchants' rate limits (suite.py's)."""
    from merchants.models import Merchant

    people = buyers(SERVICE_BUYERS, prefix=prefix)
    merchant_ids = [
        str(i)
        for i in Merchant.objects.filter(name__startswith=prefix).values_list("id", flat=True)
    ]
    # Enough listings for a service three times as fast as the buy scenario's best run.
    per_run = seconds * 200
    listings = untaken_listings(WARMUP_SECONDS * 200 + 2 * per_run)
    warm, loaded, paced = (
        listings[: WARMUP_SECONDS * 200],
        listings[WARMUP_SECONDS * 200 : -per_run],
        listings[-per_run:],
    )
    receiver = _receiver_pid()
    limit_lines = pipeline_lines(seconds * 2_000)
    with limit_worker(callback_url.replace(SERVICE_HOOKS, LIMIT_HOOKS)) as worker:
        limit = Side(
            "the pipeline limit (POST /limit/buy-pipeline)",
            limit_url,
            LIMIT_HOOKS,
            _limit_created,
            {
                "web": limit_web,
                "worker": worker.pid,
                "receiver": receiver,
                **{f"idle {kind}": pid for kind, pid in service_trees.items()},
            },
        )
        service = Side(
            "the service (POST /secure/buy)",
            service_url,
            SERVICE_HOOKS,
            _service_created(merchant_ids),
            {
                **service_trees,
                "receiver": receiver,
                "idle web": limit_web,
                "idle worker": worker.pid,
            },
        )
        run_side(limit, limit_lines[: WARMUP_SECONDS * 2_000], WARMUP_SECONDS)
        limit_run = run_side(limit, limit_lines[WARMUP_SECONDS * 2_000 :], seconds)
        print(limit_run.row(), flush=True)
        lift(merchant_ids)
        run_side(service, buy_requests(people, warm), WARMUP_SECONDS)
        service_run = run_side(service, buy_requests(people, loaded), seconds, profiler=profiler)
        print(service_run.row(), flush=True)
        rate = max(1.0, PACED_SHARE * service_run.per_second)
        connections = paced_connections(rate)
        lift(merchant_ids)
        paced_run = run_side(
            replace(service, label=f"the service paced at {rate:.0f} buys/s"),
            buy_requests(people, paced),
            seconds,
            connections=connections,
            delay_ms=1000 * connections / rate,
        )
        print(paced_run.row(), flush=True)
    return Pipeline(limit=limit_run, service=service_run, paced=paced_run, paced_rate=rate)
