"""The benchmark suite of issue 7, run by ``bench/run``: the service as production runs it
(gunicorn, a Celery worker with beat, PostgreSQL, Redis), data at scale, every endpoint driven
by wrk from its own process, and ``bench/results/latest.md`` with the figures, the machine's
load beside each one, the web workers' peak memory and the targets.

    bench/run [--seconds 20] [--only baseline,prices] [--profile]

The bench's merchants get their rate-limit windows set far back before each scenario (see
``rate_limits_lift``): the figures are what a request costs, not the contract's quotas.
"""

import argparse
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import suite_data as data
from cpu_share import cpu_used, snapshot
from harness import (
    BENCH_ENV,
    DEFAULT_SERVER,
    RESULTS,
    ROOT,
    SERVERS,
    VENV,
    Request,
    Result,
    Stack,
    Web,
    drive,
    ensure_database,
    load_average,
    receiver,
    setup_django,
    stack,
)
from limits import BUY, NO_IO, PAGE, READ, WRITE, limit_lines, limit_server, limit_tables_ensure
from pipeline import Pipeline, pipeline_measure
from report import Measured, report_write
from tradedata import RECEIVER_PORT, drain, vacuum_analyze

WARMUP_SECONDS = 3
WEB_WORKERS = 2  # one per core; threads overlap a request's waits on PostgreSQL and Redis
WEB_THREADS = 4
CONNECTIONS = 32  # wrk's, as the issue's own table
# Keep-alive connections stay on the worker that accepted them, and one worker often accepted
# all 32 in a burst (the other measured 0.02 cores) whatever the count. A load balancer spreads
# production's; here each gthread worker takes at most its half of wrk's connections plus its
# threads (20): at least 12 land on the other, enough to keep it busy. Keep-alive stays on:
# gthread keeps up to ``worker_connections - threads`` (16) idle connections, more than a worker
# holds, so none is closed (taking no more connections than threads, as this suite once did,
# turns keep-alive off and cost gunicorn half its throughput: bench/README.md, "Web server").
# config/gunicorn.py keeps gunicorn's 1,000. A scenario whose web workers' CPU is still lopsided
# is measured once more (``UNEVEN_SHARE``).
WORKER_CONNECTIONS = CONNECTIONS // WEB_WORKERS + WEB_THREADS
PIPELINE = "pipeline"  # the scenario of issue 43: the buy end to end (bench/pipeline.py)
# A run where one web worker did less than this share of the web workers' CPU measured one core.
UNEVEN_SHARE = 0.3


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    lines: Callable[[], list[Request]]
    limit: str = READ  # the limit it is a share of: NO_IO, READ, WRITE, PAGE or BUY
    write: bool = False  # each line is sent once; the worker drains the backlog afterwards
    needs: str = ""  # a path that must resolve on this commit, else "not available"


def scenarios(cast: data.Cast, scale: data.Scale, seconds: int) -> list[Scenario]:
    buys, withdrawals = data.listings_for_writes(seconds * 400, seconds * 300)
    return [
        Scenario(
            "baseline",
            "GET /sandbox/clock (the service's no-op)",
            lambda: data.baseline_lines(cast),
            limit=NO_IO,
        ),
        Scenario(
            "authenticate",
            "POST /auth/authenticate-client",
            lambda: data.authenticate_lines(cast),
            limit=WRITE,
        ),
        Scenario("balance", "GET /v1/wallets/me/balance", lambda: data.balance_lines(cast)),
        Scenario("prices", "GET /secure/prices (game 730)", lambda: data.prices_lines(cast)),
        Scenario(
            "market_search",
            "GET /client/market search + sort, 1M listings",
            lambda: data.market_search_lines(cast),
        ),
        Scenario(
            "secure_market",
            "GET /secure/market search",
            lambda: data.secure_market_lines(cast),
        ),
        Scenario("market_item", "GET /secure/market/item", lambda: data.market_item_lines(cast)),
        Scenario("inventory", "GET /client/inventory", lambda: data.inventory_lines(cast)),
        Scenario(
            "trades_page1",
            "GET /secure/trades page 1",
            lambda: data.trades_lines(scale, None),
            limit=PAGE,
        ),
        Scenario(
            "trades_deep",
            "GET /secure/trades 90,000 deep",
            lambda: data.trades_lines(scale, 1),
            limit=PAGE,
        ),
        Scenario(
            "ledger_list",
            "GET /v1/ledger/transactions",
            lambda: data.ledger_list_lines(scale),
            needs="/v1/ledger/transactions",
        ),
        Scenario(
            "ledger_lookup",
            "GET /v1/ledger/transactions/{id}",
            lambda: data.ledger_lookup_lines(scale),
            needs="/v1/ledger/transactions/00000000-0000-0000-0000-000000000000",
        ),
        Scenario(
            "crypto_address",
            "GET /client/crypto/deposit-address?chain=ETH",
            lambda: data.crypto_address_lines(cast),
        ),
        Scenario(
            "baseline_again",
            "GET /sandbox/clock (the no-op, after the reads)",
            lambda: data.baseline_lines(cast),
            limit=NO_IO,
        ),
        Scenario(
            "deposit",
            "POST /client/trading/deposit",
            lambda: data.deposit_lines(cast),
            limit=WRITE,
            write=True,
        ),
        Scenario(
            "withdraw",
            "POST /client/trading/withdraw",
            lambda: data.withdraw_lines(cast, withdrawals),
            limit=WRITE,
            write=True,
        ),
        Scenario(
            "buy", "POST /secure/buy", lambda: data.buy_lines(cast, buys), limit=BUY, write=True
        ),
        # Measured by bench/pipeline.py, not by ``measure``: its own loads and drains.
        Scenario(PIPELINE, "POST /secure/buy end to end, against the pipeline limit", list),
    ]


# ``--only targets``: every scenario issue 32's targets are judged on (the reads, the trade
# pages, the no-op, authenticate-client and the buy), without the deposit and withdraw writes
# and the price book, which have none; about 17 minutes at 20 s each.
PRESETS = {
    "targets": [
        "baseline",
        "authenticate",
        "balance",
        "market_search",
        "secure_market",
        "market_item",
        "inventory",
        "trades_page1",
        "trades_deep",
        "ledger_list",
        "ledger_lookup",
        "crypto_address",
        "baseline_again",
        "buy",
    ]
}


def chosen_keys(only: str) -> set[str] | None:
    """The scenario keys ``--only`` names (a preset's name stands for its keys); None: all."""
    if not only:
        return None
    return {key for word in only.split(",") for key in PRESETS.get(word, [word])}


def rate_limits_lift(merchant_ids: list[str]) -> None:
    """Set every budget's counter of these merchants 10^9 requests back, in this window and the
    next: each request still counts itself (one EVALSHA), none is refused."""
    import redis
    from django.conf import settings

    from core.api.routes import routed_views
    from merchants.views import CallerApiView

    client = redis.Redis.from_url(settings.REDIS_URL)
    budgets = {
        (view.rate_limit.bucket, view.rate_limit.rates.verified.window_seconds)
        for _, view in routed_views()
        if issubclass(view, CallerApiView) and view.rate_limit is not None
    }
    now = time.time()
    with client.pipeline(transaction=False) as pipe:
        for merchant_id in merchant_ids:
            for bucket, window in budgets:
                slot = int(now // window)
                for at in (slot, slot + 1):
                    pipe.set(f"rl:{bucket}:v:{merchant_id}:{window}:{at}", -(10**9), ex=3 * window)
        pipe.execute()


def available(path: str) -> bool:
    from django.urls import Resolver404, resolve

    try:
        resolve(path)
    except Resolver404:
        return False
    return True


# Below this many cores the Celery worker counts as idle; reads are measured only then.
WORKER_IDLE_CORES = 0.05


def worker_cost(service: Stack, before: dict, outcome: Measured) -> str:  # type: ignore[type-arg]
    """The Celery worker's CPU per request of a write, over its load and the drain after it:
    steadier than the drain's seconds, which depend on how many requests the load made."""
    assert service.worker is not None
    assert outcome.result is not None
    used = cpu_used(before, snapshot(), {"worker": service.worker.pid}, os.getpid())["worker"]
    served = outcome.result.requests
    per_request = used / served * 1000 if served else 0.0
    return (
        f"{outcome.label}: the worker used {used:.1f} s of CPU for {served} requests,"
        f" {per_request:.1f} ms each (the load and the drain)."
    )


def worker_idle_wait(service: Stack, max_seconds: int = 300) -> float | None:
    """Seconds until the Celery worker (and beat) used under ``WORKER_IDLE_CORES`` over two
    seconds; None if it never did. Earlier runs' trades keep the sandbox autopilot and their
    webhooks busy for minutes, and that CPU would be taken from the web workers being measured."""
    assert service.worker is not None
    started = time.monotonic()
    while time.monotonic() - started < max_seconds:
        before = snapshot()
        time.sleep(2)
        used = cpu_used(before, snapshot(), {"worker": service.worker.pid}, os.getpid())
        if used["worker"] / 2 < WORKER_IDLE_CORES:
            return time.monotonic() - started
    return None


def limit_measure(limits: Web, kind: str, seconds: int) -> Result:
    """The limit of this kind, warmed up, just before the endpoint compared with it."""
    lines = limit_lines(kind)
    drive(
        limits.base_url,
        kind,
        lines,
        seconds=WARMUP_SECONDS,
        connections=CONNECTIONS,
        warmup_seconds=0,
    )
    return drive(
        limits.base_url, kind, lines, seconds=seconds, connections=CONNECTIONS, warmup_seconds=0
    )


def measure(
    service: Stack,
    limits: Web,
    scenario: Scenario,
    warmup: list[Request],
    seconds: int,
    profile: bool,
) -> Measured:
    requests = scenario.lines()
    limit = limit_measure(limits, scenario.limit, seconds)
    service.workers_renew()
    load_before = load_average()
    # Writes send each line once: their fresh workers warm up on the baseline request.
    drive(
        service.base_url,
        scenario.label,
        warmup if scenario.write else requests,
        seconds=WARMUP_SECONDS,
        connections=CONNECTIONS,
        warmup_seconds=0,
    )
    profiler = _profiler(service, scenario.key, seconds) if profile else None
    snapshots: dict[str, tuple[float, dict]] = {"before": (time.monotonic(), snapshot())}  # type: ignore[type-arg]
    sampler = threading.Timer(
        seconds - 1, lambda: snapshots.update(after=(time.monotonic(), snapshot()))
    )
    sampler.start()
    result = drive(
        service.base_url,
        scenario.label,
        requests,
        seconds=seconds,
        connections=CONNECTIONS,
        warmup_seconds=0,
    )
    sampler.join()
    if profiler is not None:
        profiler.wait()
    (started, before), (ended, after) = snapshots["before"], snapshots["after"]
    assert service.worker is not None
    # Each web worker on its own (the first tree a process is in counts it), then the rest.
    trees = {f"web {n}": pid for n, pid in enumerate(sorted(service.web_pids()), 1)}
    trees |= {"web": service.web.pid, "worker": service.worker.pid}
    used = cpu_used(before, after, trees, os.getpid())
    return Measured(
        key=scenario.key,
        label=scenario.label,
        result=result,
        limit_kind=scenario.limit,
        limit=limit,
        lines=len(requests),
        load_before=load_before,
        load_after=load_average(),
        cores={kind: cpu / (ended - started) for kind, cpu in used.items()},
        peak_rss_mb=service.peak_rss_mb(),
    )


def _profiler(service: Stack, key: str, seconds: int) -> subprocess.Popen[bytes]:
    """py-spy on the first web worker for the measured run, as collapsed stacks; only the
    thread holding the GIL is sampled, so the stacks show where the CPU goes, not waits."""
    return subprocess.Popen(
        [
            str(VENV / "py-spy"),
            "record",
            "--pid",
            str(service.web_pids()[0]),
            "--duration",
            str(seconds - 1),
            "--rate",
            "100",
            "--gil",
            "--format",
            "raw",
            "--output",
            str(RESULTS / f"profile-{key}.txt"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def deposits_busy(cast: data.Cast) -> Callable[[], bool]:
    """This run's deposits still waiting for their offer, or tasks still queued."""

    def busy() -> bool:
        import redis
        from django.conf import settings

        from trading.models import Status, Trade

        queued = redis.Redis.from_url(settings.CELERY_BROKER_URL).llen("celery")
        return (
            bool(queued)
            or Trade.objects.filter(
                merchant_id__in=[d.id for d in cast.depositors],
                type=Trade.Type.DEPOSIT,
                status__in=[Status.INITIATED, Status.PENDING],
            ).exists()
        )

    return busy


def wallet_check() -> tuple[bool, str]:
    done = subprocess.run(
        [str(VENV / "python"), "manage.py", "check_wallet"],
        cwd=ROOT,
        env={**os.environ, **BENCH_ENV},
        capture_output=True,
        text=True,
    )
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--", ".") else ""
    return git("rev-parse", "--short", "HEAD") + dirty


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20, help="measured seconds per scenario")
    parser.add_argument(
        "--only", default="", help="comma-separated scenario keys, or a preset: targets"
    )
    parser.add_argument("--profile", action="store_true", help="py-spy one web worker")
    parser.add_argument("--server", choices=SERVERS, default=DEFAULT_SERVER, help="web server")
    parser.add_argument("--output", type=Path, default=RESULTS / "latest.md")
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    ensure_database()
    setup_django()
    limit_tables_ensure()
    scale = data.build_scale()
    notes: list[str] = []
    measured: list[Measured] = []
    pipeline: Pipeline | None = None
    with receiver(RECEIVER_PORT) as hooks:
        cast = data.cast_create(
            prefix=f"suite {time.strftime('%Y%m%dT%H%M%S')}", callback_url=hooks
        )
        data.crypto_addresses_allocate(cast)
        data.inventories_warm(cast)
        started_build = time.perf_counter()
        data.price_books_warm(cast)
        notes.append(
            f"Price book warmed before the run in {time.perf_counter() - started_build:.1f} s."
        )
        started_vacuum = time.perf_counter()
        vacuum_analyze()
        notes.append(
            "The database vacuumed and analysed before the run in"
            f" {time.perf_counter() - started_vacuum:.1f} s: this machine's PostgreSQL runs without"
            " autovacuum, and the dead rows earlier runs' writes leave would slow this one."
        )
        merchant_ids = cast.merchant_ids() + scale.merchant_ids
        keys = chosen_keys(args.only)
        chosen = [s for s in scenarios(cast, scale, args.seconds) if keys is None or s.key in keys]
        warmup = data.baseline_lines(cast)
        size = {
            "server": args.server,
            "workers": WEB_WORKERS,
            "threads": WEB_THREADS,
            "worker_connections": WORKER_CONNECTIONS,
        }
        with stack(celery=True, **size) as service, limit_server(**size) as limits:  # type: ignore[arg-type]
            for scenario in chosen:
                if scenario.key == PIPELINE:
                    pipeline = pipeline_run(service, limits, hooks, cast.prefix, args)
                    continue
                if scenario.needs and not available(scenario.needs):
                    measured.append(Measured.unavailable(scenario.key, scenario.label))
                    print(f"{scenario.label}: not available on this commit", flush=True)
                    continue
                rate_limits_lift(merchant_ids)
                waited = None if scenario.write else worker_idle_wait(service)
                if not scenario.write and (waited is None or waited > 5):
                    notes.append(
                        f"Before {scenario.label}: the worker was still busy after 300 s."
                        if waited is None
                        else f"Before {scenario.label}: waited {waited:.0f} s for an idle worker."
                    )
                worker_before = snapshot()
                outcome = measure(service, limits, scenario, warmup, args.seconds, args.profile)
                if not scenario.write and outcome.uneven(UNEVEN_SHARE):
                    notes.append(
                        f"{scenario.label}: one web worker did {outcome.web_spread()} of the "
                        "web CPU; measured again."
                    )
                    outcome = measure(service, limits, scenario, warmup, args.seconds, args.profile)
                measured.append(outcome)
                print(outcome.summary(), flush=True)
                if scenario.write:
                    waited = drain(600, deposits_busy(cast))
                    measured[-1] = measured[-1].with_drain(waited)
                    notes.append(
                        f"After {scenario.label} the worker finished the backlog in {waited:.0f} s."
                        if waited is not None
                        else f"After {scenario.label} the worker had not finished in 600 s."
                    )
                    notes.append(worker_cost(service, worker_before, outcome))
                if scenario.key == "buy":
                    clean, output = wallet_check()
                    notes.append(f"`manage.py check_wallet` after secure buy: {output}")
                    measured[-1] = measured[-1].with_wallet(clean)
    report_write(
        args.output,
        measured,
        started=started,
        commit=commit(),
        seconds=args.seconds,
        setup=f"{args.server} {WEB_WORKERS} workers x {WEB_THREADS} threads"
        + (
            f" (gthread, {WORKER_CONNECTIONS} connections per worker)"
            if args.server == "gunicorn"
            else " (WSGI)"
        )
        + f"; wrk 2 threads, {CONNECTIONS} connections; each endpoint measured right after its "
        f"limit (the limit app under the same server); fresh web workers for each scenario, "
        f"warmed up {WARMUP_SECONDS} s (on the scenario's requests, writes on the no-op's)",
        notes=notes,
        sections=pipeline.markdown() if pipeline is not None else [],
    )
    print(args.output.read_text())
    if pipeline is not None:
        print(pipeline.last_line())


def pipeline_run(
    service: Stack, limits: Web, hooks: str, prefix: str, args: argparse.Namespace
) -> Pipeline:
    """Issue 43's scenario, with the service's worker idle first (as before a read)."""
    assert service.worker is not None
    worker_idle_wait(service)
    return pipeline_measure(
        service_url=service.base_url,
        service_trees={"web": service.web.pid, "worker": service.worker.pid},
        limit_url=limits.base_url,
        limit_web=limits.web.pid,
        callback_url=hooks,
        prefix=f"{prefix} pipeline buyer",
        seconds=args.seconds,
        lift=rate_limits_lift,
        profiler=(lambda: _profiler(service, PIPELINE, args.seconds)) if args.profile else None,
    )


if __name__ == "__main__":
    main()
