"""The service after a busy year (issue 43): every hot endpoint and every periodic sweep's query
near empty (1,000 trades) and again over ``--trades`` trades (bench/scale_fill.py: 1,000
merchants; the trades' items and events, twice as many ledger postings, half as many webhook
events, a tenth as many idempotency keys and market listings), then ``check_wallet`` timed.

    bench/run --only scale --trades 1000000
    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_scale_bench \\
        BENCH_REDIS_URL=redis://127.0.0.1:6379/8 bench/run --only scale   # 10,000,000 trades

The database must be one of its own (its name holds "scale"): the big tables are emptied first.
The endpoints run in this process through Django's whole request path (middleware, the gate on
Redis, the view, the JSON), each asked ``--repeat`` times as the busiest merchant (a tenth of
every table is its own) after a warm-up, every market request a different page (no cached
answer). Each sweep's query is the sweep's own statement (tests/perf/plans.py), run under
``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` in a transaction rolled back: the indexes it read
through, the rows it looked at against the rows it found due. The last line printed is
``scale: at N trades the slowest hot endpoint is R x its time when empty``.
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trading_scale_bench"
)

from harness import BENCH_ENV, ensure_database, load_average, setup_django  # noqa: E402

EMPTY_TRADES = 1_000
ITEMS = 20_000  # the market's catalog, both games
WARMUP = 3


@dataclass(frozen=True)
class Probe:
    """Who asks: the busiest merchant's keys, one of its trades and a client's token."""

    merchant_id: str
    key: str
    ledger_key: str
    token: str
    trade_id: str
    external_id: str
    deep_cursor: str
    items: list[str]


def merchants_ready() -> tuple[list[str], dict[str, int]]:
    """The 1,000 merchants (made once, found by name after) and the wallet accounts the fill
    posts to: each merchant's available balance, the world's and the supplier payables."""
    from scale_fill import MERCHANTS

    from merchants.models import Merchant
    from merchants.services import merchant_create
    from wallet.models import Account
    from wallet.services import account_get

    found = list(
        Merchant.objects.filter(name__startswith="scale ")
        .order_by("name")
        .values_list("pk", "name")
    )
    if len(found) < MERCHANTS:
        names = {name for _, name in found}
        for n in range(MERCHANTS):
            if f"scale {n:04d}" not in names:
                merchant_create(name=f"scale {n:04d}", is_verified=True)
        found = list(
            Merchant.objects.filter(name__startswith="scale ")
            .order_by("name")
            .values_list("pk", "name")
        )
    merchants = [str(pk) for pk, _ in found]
    accounts = {
        str(a.merchant_id): a.pk
        for a in Account.objects.filter(
            merchant_id__in=merchants, kind=Account.Kind.AVAILABLE
        ).only("pk", "merchant_id")
    }
    for merchant in Merchant.objects.filter(pk__in=set(merchants) - set(accounts)):
        accounts[str(merchant.pk)] = account_get(merchant=merchant, kind="available").pk
    for kind in ("world", "supplier"):
        accounts[kind] = account_get(merchant=None, kind=kind).pk
    return merchants, accounts


def sql(statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    from retention import sql as run

    return run(statement, params)


def filled(trades: int, merchants: list[str], accounts: dict[str, int]) -> float:
    """The database as after ``trades`` trades; the seconds it took."""
    from scale_fill import TABLES, emptied, fill

    from sandbox.services.seeding import sandbox_seed

    started = time.perf_counter()
    emptied()
    sums = fill(trades=trades, merchants=merchants, accounts=accounts)
    for account, total in sums.items():
        sql("UPDATE wallet_account SET balance = %s WHERE id = %s", [total, account])
    listings = max(trades // 10, ITEMS)
    began = time.perf_counter()
    sandbox_seed(items=ITEMS, listings=listings)
    print(f"  {listings:,} market listings: {time.perf_counter() - began:.1f} s", flush=True)
    began = time.perf_counter()
    for table in TABLES:
        sql(f"VACUUM ANALYZE {table}")
    print(f"  VACUUM ANALYZE: {time.perf_counter() - began:.1f} s", flush=True)
    return time.perf_counter() - started


def probe_ready(merchants: list[str], trades: int) -> Probe:
    from scale_fill import BUSIEST_SHARE, PROBE_CLIENT, external_id, trade_id

    from merchants.models import Merchant, Scope
    from merchants.services import ClientData, api_key_create, client_authenticate
    from trading.history.selectors import _encode_cursor
    from trading.models import CatalogItem, Trade

    busiest = Merchant.objects.get(pk=merchants[0])
    _, key = api_key_create(merchant=busiest, scopes=[Scope.CORE_ACCESS])
    _, ledger_key = api_key_create(merchant=busiest, scopes=[Scope.LEDGER_READ])
    token = client_authenticate(
        merchant=busiest,
        platform_id=PROBE_CLIENT,
        trade_url="https://steamcommunity.com/tradeoffer/new/?partner=101&token=Ab3_x-Z9",
        client_id=None,
        client_data=ClientData(),
    )
    # A trade from the middle of the year, and a page 90 % down the merchant's history.
    middle = (trades // 2) // BUSIEST_SHARE * BUSIEST_SHARE
    own = Trade.objects.filter(merchant=busiest, source="self", game=730).order_by(
        "-created_at", "-id"
    )
    deep = own[int(trades / BUSIEST_SHARE * 0.9)]
    items = CatalogItem.objects.filter(game=730).order_by("-popularity", "id")
    return Probe(
        merchant_id=merchants[0],
        key=key,
        ledger_key=ledger_key,
        token=token,
        trade_id=trade_id(middle),
        external_id=external_id(middle),
        deep_cursor=_encode_cursor(deep),
        items=list(items.values_list("id", flat=True)[:500]),
    )


def endpoints(probe: Probe) -> dict[str, Callable[[int], tuple[str, dict[str, str]]]]:
    """Each hot endpoint's n-th request: (path, headers)."""
    from urllib.parse import quote

    from market import SEARCHES, SORTS

    merchant = {"HTTP_API_KEY": probe.key}
    searches = [(term, sort) for term in SEARCHES for sort in SORTS]
    return {
        "GET /v1/wallets/me/balance": lambda n: ("/v1/wallets/me/balance", merchant),
        "GET /secure/market/item": lambda n: (
            f"/secure/market/item?itemId={quote(probe.items[n % len(probe.items)])}",
            merchant,
        ),
        "GET /secure/market search": lambda n: (
            "/secure/market?search={}&sort={}".format(*searches[n % len(searches)]),
            merchant,
        ),
        "GET /client/inventory": lambda n: (
            "/client/inventory",
            {"HTTP_AUTHORIZATION": f"Bearer {probe.token}"},
        ),
        "GET /secure/trades/{id}": lambda n: (f"/secure/trades/{probe.trade_id}", merchant),
        "GET /secure/trades/{externalId}": lambda n: (
            f"/secure/trades/{probe.external_id}",
            merchant,
        ),
        "GET /secure/trades page 1": lambda n: ("/secure/trades?limit=20", merchant),
        "GET /secure/trades 90 % deep": lambda n: (
            f"/secure/trades?limit=20&cursor={probe.deep_cursor}",
            merchant,
        ),
        "GET /v1/ledger/transactions": lambda n: (
            "/v1/ledger/transactions",
            {"HTTP_API_KEY": probe.ledger_key},
        ),
    }


@dataclass(frozen=True)
class Timed:
    median: float  # ms, the whole request in this process
    p90: float
    sql: float  # ms, the median request's statements


def endpoints_time(probe: Probe, repeat: int, first: int = 0) -> dict[str, Timed]:
    """Each endpoint over ``repeat`` requests (its requests from the ``first``-th on: another
    pass asks other market pages): the whole request's median and 90th percentile, and the
    median of the time its SQL statements took, on every connection (as the cursor saw them:
    the part of a request a bigger table can slow; the rest is Python, which this shared
    machine's load slows)."""
    from django.db import connection, connections
    from django.test import Client
    from suite import rate_limits_lift

    spent: list[float] = []

    def clocked(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent.append(time.perf_counter() - started)

    client = Client()
    timed: dict[str, Timed] = {}
    for label, request in endpoints(probe).items():
        rate_limits_lift([probe.merchant_id])
        times, sql_times = [], []
        for n in range(WARMUP + repeat):
            path, headers = request(first + n)
            spent.clear()
            with ExitStack() as stack:  # every alias: the ledger reads through its own
                for alias in connections:
                    stack.enter_context(connections[alias].execute_wrapper(clocked))
                started = time.perf_counter()
                answer = client.get(path, **headers)  # type: ignore[arg-type]
                elapsed = (time.perf_counter() - started) * 1000
            if answer.status_code != 200:  # measured still, but said: not what a reader gets
                print(f"  {label}: answered {answer.status_code} {answer.content[:200]!r}")
            if n >= WARMUP:
                times.append(elapsed)
                sql_times.append(sum(spent) * 1000)
        times.sort()
        timed[label] = Timed(
            statistics.median(times), times[int(len(times) * 0.9)], statistics.median(sql_times)
        )
        print(
            f"  {label}: median {timed[label].median:.1f} ms, p90 {timed[label].p90:.1f} ms,"
            f" SQL {timed[label].sql:.1f} ms",
            flush=True,
        )
    connection.close()
    return timed


@dataclass(frozen=True)
class SweepPlan:
    name: str
    indexes: str  # the big table's reads: how, through which index
    seq_scan: bool
    examined: int
    due: int
    ms: float


def sweeps() -> list[tuple[str, Callable[[], object], str, str]]:
    """(name, the sweep, the table its statement reads, the index it should read it through),
    and the console's attention board: a selector, each of its statements run and explained."""
    from core import clock
    from tests.perf.sweeps import SWEEPS
    from trading.selectors.attention import trades_overdue_counts

    return [(s.name, s.run, s.table, s.index) for s in SWEEPS] + [
        (
            "attention board: trades overdue",
            lambda: trades_overdue_counts(now=clock.now()),
            "trading_trade",
            "",
        )
    ]


def sweeps_explain() -> list[SweepPlan]:
    from tests.perf.plans import plan_of, reads, selection, sweep_statements

    found = []
    for name, sweep, table, index in sweeps():
        statements = sweep_statements(sweep, table=table, every=not index)
        how: dict[str, int] = {}
        seq = False
        examined = due = 0
        ms = 0.0
        for statement in statements:
            explained = plan_of(statement, analyze=True)
            plan = explained["Plan"]
            ms += explained["Execution Time"]
            # A purge's batch: the rows its CTE chose, then deleted by primary key.
            chosen = selection(plan)
            due += round(chosen["Actual Rows"])
            for read in reads(chosen):
                if read.table != table:
                    continue
                key = f"{read.how} on {'/'.join(sorted(read.indexes)) or table}"
                how[key] = how.get(key, 0) + 1
                seq = seq or read.how == "Seq Scan"
                examined += read.examined
        ways = ", ".join(f"{key}" + (f" x{n}" if n > 1 else "") for key, n in how.items())
        if index and index not in ways:
            ways += f" (**not {index}**)"
        found.append(SweepPlan(name, ways, seq, examined, due, ms))
        print(
            f"  {name}: {ways}; {examined:,} rows looked at, {due:,} due; {ms:.1f} ms",
            flush=True,
        )
    return found


def wallet_check_time() -> tuple[float, float, str]:
    """``manage.py check_wallet`` as an operator runs it (seconds, a Django start included),
    the invariants' own queries in this process (seconds), and what the command said."""
    from suite import wallet_check

    from wallet.selectors import wallet_invariants_check

    started = time.perf_counter()
    wallet_invariants_check()
    queries = time.perf_counter() - started
    started = time.perf_counter()
    _, said = wallet_check()
    return time.perf_counter() - started, queries, said.splitlines()[-1]


@dataclass
class Run:
    trades: int
    fill_seconds: float
    endpoints: dict[str, Timed]
    sweeps: list[SweepPlan]
    wallet: tuple[float, float, str]


def run_at(trades: int, merchants: list[str], accounts: dict[str, int], repeat: int) -> Run:
    print(f"\n{trades:,} trades: fill (load average {load_average()[0]:.1f})", flush=True)
    seconds = filled(trades, merchants, accounts)
    print(f"  filled in {seconds:.0f} s", flush=True)
    probe = probe_ready(merchants, trades)
    print(f"{trades:,} trades: hot endpoints (load average {load_average()[0]:.1f})", flush=True)
    if trades == EMPTY_TRADES:  # the process's first requests: imports, caches, plans
        print("  (a first pass, to warm this process up, not kept)", flush=True)
        endpoints_time(probe, repeat, first=WARMUP + repeat)
    timed = endpoints_time(probe, repeat)
    print(f"{trades:,} trades: sweeps' queries", flush=True)
    plans = sweeps_explain()
    print(f"{trades:,} trades: check_wallet over {2 * trades:,} postings", flush=True)
    wallet = wallet_check_time()
    print(f"  {wallet[0]:.1f} s ({wallet[1]:.1f} s of queries): {wallet[2]}", flush=True)
    return Run(trades, seconds, timed, plans, wallet)


def report(empty: Run, full: Run) -> float:
    """The comparison table; returns the largest ratio of an endpoint's median to its own
    near empty."""
    print(
        f"\n| endpoint | {empty.trades:,} trades: median / p90 (SQL) | {full.trades:,} trades |"
        " x (SQL x) |"
    )
    print("|---|---:|---:|---:|")
    ratios = {}
    for label, now in full.endpoints.items():
        was = empty.endpoints[label]
        ratios[label] = now.median / was.median
        print(
            f"| {label} | {was.median:.1f} / {was.p90:.1f} ms ({was.sql:.1f})"
            f" | {now.median:.1f} / {now.p90:.1f} ms ({now.sql:.1f})"
            f" | {ratios[label]:.2f} ({now.sql / max(was.sql, 0.01):.2f}) |"
        )
    print(
        f"\n| sweep's query | reads ({full.trades:,} trades) | looked at / due, empty |"
        f" looked at / due | ms, empty / full |"
    )
    print("|---|---|---:|---:|---:|")
    for before, after in zip(empty.sweeps, full.sweeps, strict=True):
        flag = " **Seq Scan**" if after.seq_scan else ""
        print(
            f"| {after.name} | {after.indexes}{flag} | {before.examined:,} / {before.due:,}"
            f" | {after.examined:,} / {after.due:,} | {before.ms:.1f} / {after.ms:.1f} |"
        )
    print(
        f"\ncheck_wallet: {empty.wallet[0]:.1f} s ({empty.wallet[1]:.1f} s of queries) over"
        f" {2 * empty.trades:,} postings, {full.wallet[0]:.1f} s ({full.wallet[1]:.1f} s) over"
        f" {2 * full.trades:,} ({full.wallet[2]})"
    )
    return max(ratios.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="scale", help="(bench/run's: always scale here)")
    parser.add_argument("--trades", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=30, help="requests per endpoint")
    args = parser.parse_args()
    name = BENCH_ENV["DATABASE_URL"].rsplit("/", 1)[1]
    if "scale" not in name:
        sys.exit(f"{name}: give a database of its own (its name holding 'scale'): it is emptied")
    ensure_database()
    setup_django()
    print(f"{name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    merchants, accounts = merchants_ready()
    empty = run_at(EMPTY_TRADES, merchants, accounts, args.repeat)
    full = run_at(args.trades, merchants, accounts, args.repeat)
    ratio = report(empty, full)
    print(
        f"scale: at {args.trades:,} trades the slowest hot endpoint is {ratio:.1f} x its time"
        " when empty"
    )


if __name__ == "__main__":
    main()
