"""A profile of the buy across web, worker and PostgreSQL (issue 32), in one process so that
every unit of work can be counted on its own: ``--buys`` buys of distinct listings through the
whole Django stack (``django.test.Client``, the gate's Redis round trip included), then every
task they hand to the worker, run one at a time as a worker thread runs it (``Task.apply``, the
task signals included), until none is left. For each kind of unit (the request, each kind of
task) it prints how many ran per buy, and per unit: statements, transactions (each a BEGIN and a
COMMIT round trip besides its statements), Redis round trips, this process's CPU and the CPU of
the database's PostgreSQL backends (read from /proc).

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_perf_h \\
        BENCH_REDIS_URL=redis://127.0.0.1:6379/12 .venv/bin/python bench/buy_profile.py --buys 200

``--split`` also times the pieces of the request (``SPLIT``) on their own: CPU, statements and
Redis round trips of each, where its caller calls it (issue 43: what leaves the hot path saves).

Uses the bench database (bench/run makes it) and the bench receiver as the merchants' callback
URL (it approves every withdrawal). Hand-offs to the broker are kept in a list instead of sent:
the broker's own round trips are not counted (two to three Redis commands a hand-off in kombu).
"""

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ensure_database, processes_cpu, receiver, setup_django
from tradedata import RECEIVER_PORT, TRADE_URL, buyers, untaken_listings

# This process's PostgreSQL connections are named so (libpq's PGAPPNAME): the backends whose CPU
# is counted, whatever else uses the database.
APPLICATION_NAME = "bench-buy-profile"
WEB_UNIT = "web POST /secure/buy"


@dataclass
class Tally:
    """What the units of one kind cost, summed."""

    units: int = 0
    statements: int = 0
    transactions: int = 0
    redis: int = 0
    cpu: float = 0.0  # this process, seconds
    postgres: float = 0.0  # the database's backends, seconds
    kinds: Counter[str] = field(default_factory=Counter)  # statements by their first word


class Counters:
    """Statements (Django's execute wrappers), transactions (commits and rollbacks) and Redis
    round trips (replies read) made by this process."""

    def __init__(self) -> None:
        self.trace: list[str] | None = None  # the statements' text, while a list
        self.statements = 0
        self.transactions = 0
        self.redis = 0
        self.kinds: Counter[str] = Counter()

    def install(self) -> None:
        import redis.connection
        from django.db.backends.base.base import BaseDatabaseWrapper

        counters = self

        def wrap(method: Callable[..., Any], count: Callable[[], None]) -> Callable[..., Any]:
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                count()
                return method(*args, **kwargs)

            return wrapped

        def commit() -> None:
            counters.transactions += 1

        def read() -> None:
            counters.redis += 1

        BaseDatabaseWrapper._commit = wrap(BaseDatabaseWrapper._commit, commit)  # type: ignore[method-assign]
        BaseDatabaseWrapper._rollback = wrap(BaseDatabaseWrapper._rollback, commit)  # type: ignore[method-assign]
        redis.connection.AbstractConnection.read_response = wrap(  # type: ignore[method-assign]
            redis.connection.AbstractConnection.read_response, read
        )

    def statement(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        self.statements += 1
        if self.trace is not None:
            self.trace.append(" ".join(sql.split())[:160])
        self.kinds[sql.lstrip().split(None, 1)[0].upper()] += 1
        return execute(sql, params, many, context)


def postgres_cpu() -> float:
    """CPU seconds used so far by the PostgreSQL backends connected to the bench database."""
    from django.db import connections

    # Its own connection, outside the counted ones: reading pg_stat_activity is not the buy's.
    with connections["profile"].cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
            " AND pid <> pg_backend_pid()",
            [APPLICATION_NAME],
        )
        pids = [row[0] for row in cursor.fetchall()]
    return processes_cpu(pids)


# The pieces of ``POST /secure/buy`` that ``--split`` times: (label, module, attribute), each
# wrapped in the module its caller finds it in. Indented labels are inside the one above.
SPLIT = (
    ("the gate: rate limit and API key", "merchants.views", "CallerApiView.initial"),
    ("the body parsed", "merchants.views", "CallerApiView.parse_body"),
    ("withdrawal_create", "trading.withdrawals.apis.withdraw", "withdrawal_create"),
    ("  externalId unused", "trading.withdrawals.services.create", "external_id_unused_check"),
    ("  the trade-URL check", "trading.withdrawals.services.create", "recipient_check"),
    ("  the price lookup", "trading.withdrawals.services.create", "_priced_listings"),
    ("  the catalog's names (in_bulk)", "django.db.models.query", "QuerySet.in_bulk"),
    ("  the transaction", "trading.withdrawals.services.create", "withdrawal_store"),
    ("    the trade's and items' INSERT", "trading.withdrawals.services.create", "trade_insert"),
    ("      the trade's INSERT", "trading.trades.services", "changes_save"),
    ("      the items' INSERT", "django.db.models.query", "QuerySet.bulk_create"),
    ("    its event told", "trading.withdrawals.services.create", "trade_events_publish"),
    ("      the trade rendered for its event", "trading.trades.channels", "trade_json"),
    ("      the event's INSERT", "trading.trades.channels", "webhook_event_emit"),
    ("    the wallet's lock and transfer", "trading.withdrawals.services.create", "wallet_lock"),
    ("    COMMIT", "django.db.backends.base.base", "BaseDatabaseWrapper.commit"),
    (
        "    after the commit: feed, metrics, hand-off",
        "django.db.backends.base.base",
        "BaseDatabaseWrapper.run_and_clear_commit_hooks",
    ),
    ("the response rendered", "trading.withdrawals.apis.withdraw", "trade_json"),
)


class Split:
    """CPU (this process), statements and Redis round trips inside each piece of ``SPLIT``,
    counted while ``active``; a piece called within itself counts once."""

    def __init__(self, counters: Counters) -> None:
        self.counters = counters
        self.active = False
        self.tally: dict[str, list[float]] = {label: [0.0, 0, 0] for label, _, _ in SPLIT}
        self.depth: Counter[str] = Counter()

    def install(self) -> None:
        import importlib

        for label, module_name, attribute in SPLIT:
            owner: Any = importlib.import_module(module_name)
            *path, name = attribute.split(".")
            for part in path:
                owner = getattr(owner, part)
            setattr(owner, name, self._timed(label, getattr(owner, name)))

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        split = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if not split.active or split.depth[label]:
                return function(*args, **kwargs)
            c = split.counters
            before = (time.process_time(), c.statements, c.redis)
            split.depth[label] += 1
            try:
                return function(*args, **kwargs)
            finally:
                split.depth[label] -= 1
                tally = split.tally[label]
                tally[0] += time.process_time() - before[0]
                tally[1] += c.statements - before[1]
                tally[2] += c.redis - before[2]

        return timed

    def table(self, buys: int, request_cpu: float) -> str:
        lines = [
            f"The request's pieces ({buys} buys; CPU of this process, mean per buy; share of "
            f"the request's {1000 * request_cpu / buys:.2f} ms):",
            "",
            "| piece | CPU ms | share | statements | Redis round trips |",
            "|---|---:|---:|---:|---:|",
        ]
        for label, _, _ in SPLIT:
            cpu, statements, redis = self.tally[label]
            lines.append(
                f"| {label.replace('  ', '&nbsp;&nbsp;')} | {1000 * cpu / buys:.2f} "
                f"| {cpu / request_cpu:.0%} | {statements / buys:.1f} | {redis / buys:.1f} |"
            )
        return "\n".join(lines)


class Profile:
    def __init__(self, counters: Counters) -> None:
        self.counters = counters
        self.tallies: dict[str, Tally] = defaultdict(Tally)
        self.traces: dict[str, list[str]] = {}  # the first unit of each kind's statements

    @contextmanager
    def unit(self, kind: str) -> Iterator[None]:
        from django.db import connection

        c = self.counters
        before = (c.statements, c.transactions, c.redis, Counter(c.kinds))
        pg_before = postgres_cpu()
        if kind not in self.traces:
            c.trace = self.traces[kind] = []
        cpu_before = time.process_time()
        with connection.execute_wrapper(c.statement):
            yield
        cpu = time.process_time() - cpu_before
        c.trace = None
        pg = postgres_cpu() - pg_before
        tally = self.tallies[kind]
        tally.units += 1
        tally.statements += c.statements - before[0]
        tally.transactions += c.transactions - before[1]
        tally.redis += c.redis - before[2]
        tally.kinds.update(c.kinds - before[3])
        tally.cpu += cpu
        tally.postgres += pg


def queued_hand_offs() -> list[tuple[str, tuple[Any, ...]]]:
    """Every task handed to the broker from now on, kept here instead (name, args)."""
    from celery.app.task import Task

    kept: list[tuple[str, tuple[Any, ...]]] = []

    def apply_async(self, args=None, kwargs=None, **options):  # type: ignore[no-untyped-def]
        kept.append((self.name, tuple(args or ())))

    Task.apply_async = apply_async  # type: ignore[method-assign]
    return kept


def task_kind(name: str, args: tuple[Any, ...]) -> str:
    """A webhook delivery named by its event (an approval, or which event it sends)."""
    if name != "webhooks.deliver":
        return f"task {name}"
    from merchants.webhooks.models import WebhookEvent

    event = WebhookEvent.objects.filter(pk=args[0]).values("is_approval", "payload").first()
    if event is None:
        return "task webhooks.deliver (no event)"
    if event["is_approval"]:
        return "task webhooks.deliver: approval callback (+ the purchase it follows)"
    return f"task webhooks.deliver: {event['payload'].get('type', '?')}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--buys", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20, help="buys before the counted ones")
    parser.add_argument("--output", type=Path, help="also write the table here (markdown)")
    parser.add_argument(
        "--cprofile",
        type=Path,
        help="cProfile the counted units, the top 60 functions here (the whole profile, for"
        " pstats, beside it with .prof added)",
    )
    parser.add_argument(
        "--trace", action="store_true", help="also print the statements of each kind's first unit"
    )
    parser.add_argument(
        "--split", action="store_true", help="also time the request's pieces (SPLIT) on their own"
    )
    args = parser.parse_args()
    ensure_database()
    os.environ["PGAPPNAME"] = APPLICATION_NAME
    setup_django()
    from django.conf import settings
    from django.db import connections
    from django.test import Client
    from suite import rate_limits_lift

    from config.celery import app
    from trading.pricing import fee_inclusive

    connections.databases["profile"] = {**settings.DATABASES["default"]}
    counters = Counters()
    counters.install()
    kept = queued_hand_offs()
    profile = Profile(counters)
    split = Split(counters)
    if args.split:
        split.install()
    client = Client()
    with receiver(RECEIVER_PORT):
        people = buyers(8, prefix=f"profile buyer {time.strftime('%Y%m%dT%H%M%S')}")
        rate_limits_lift([_merchant_of(key) for key, _ in people])
        listings = untaken_listings(args.warmup + args.buys)
        if len(listings) < args.warmup + args.buys:
            raise SystemExit(f"only {len(listings)} untaken listings")

        def buy(n: int, listing_id: str, price: Any) -> None:
            key, fee = people[n % len(people)]
            body = {
                "tradeUrl": TRADE_URL.format(100 + n % 50),
                "items": [{"itemId": listing_id, "price": float(fee_inclusive(price, fee))}],
            }
            answer = client.post(
                "/secure/buy", json.dumps(body), content_type="application/json", HTTP_API_KEY=key
            )
            assert answer.status_code == 200, answer.content

        def drain(counted: bool) -> None:
            while kept:
                name, task_args = kept.pop(0)
                kind = task_kind(name, task_args)
                if counted:
                    with profile.unit(kind):
                        app.tasks[name].apply(args=task_args, throw=True)
                else:
                    app.tasks[name].apply(args=task_args, throw=True)

        for n, (listing_id, price) in enumerate(listings[: args.warmup]):
            buy(n, listing_id, price)
        drain(counted=False)
        # CPU time, not wall time: on a shared machine the waits would hide where the CPU goes.
        profiler = cProfile.Profile(time.process_time) if args.cprofile else None
        if profiler is not None:
            profiler.enable()
        split.active = args.split
        for n, (listing_id, price) in enumerate(listings[args.warmup :], args.warmup):
            with profile.unit(WEB_UNIT):
                buy(n, listing_id, price)
        split.active = False
        drain(counted=True)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(f"{args.cprofile}.prof")
            with args.cprofile.open("w") as out:
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(60)
    table = profile_table(profile, args.buys)
    if args.trace:
        for kind, statements in profile.traces.items():
            print(
                f"\n{kind}:\n" + "\n".join(f"  {n}. {sql}" for n, sql in enumerate(statements, 1))
            )
    if args.split:
        table += "\n\n" + split.table(args.buys, profile.tallies[WEB_UNIT].cpu)
    print(table)
    if args.output:
        args.output.write_text(table + "\n")


def _merchant_of(key: str) -> str:
    from merchants.models import ApiKey

    rows = ApiKey.objects.filter(prefix=key[: ApiKey.PREFIX_LENGTH])
    return str(rows.values_list("merchant_id", flat=True)[0])


def profile_table(profile: Profile, buys: int) -> str:
    lines = [
        f"{buys} buys; per unit of work (mean), and per buy (the unit's count per buy times it).",
        "",
        "| unit | per buy | statements | transactions | round trips to PostgreSQL | Redis "
        "round trips | CPU ms (Python) | CPU ms (PostgreSQL) | statements by kind |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    total = Tally()
    for kind, t in sorted(profile.tallies.items()):
        n = t.units
        trips = t.statements + 2 * t.transactions
        kinds = ", ".join(f"{word} {count / n:.1f}" for word, count in t.kinds.most_common())
        lines.append(
            f"| {kind} | {n / buys:.2f} | {t.statements / n:.1f} | {t.transactions / n:.1f} "
            f"| {trips / n:.1f} | {t.redis / n:.1f} | {1000 * t.cpu / n:.1f} "
            f"| {1000 * t.postgres / n:.1f} | {kinds} |"
        )
        total.statements += t.statements
        total.transactions += t.transactions
        total.redis += t.redis
        total.cpu += t.cpu
        total.postgres += t.postgres
        total.units += n
    lines.append(
        f"| **one buy, end to end** | {total.units / buys:.2f} units | "
        f"{total.statements / buys:.1f} | {total.transactions / buys:.1f} | "
        f"{(total.statements + 2 * total.transactions) / buys:.1f} | {total.redis / buys:.1f} | "
        f"{1000 * total.cpu / buys:.1f} | {1000 * total.postgres / buys:.1f} | |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
