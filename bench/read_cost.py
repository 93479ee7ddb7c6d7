"""The cost of one read in process: CPU per request through the whole Django stack
(``django.test.Client``, warm, no network), the statements and Redis round trips of one request,
optionally a cProfile of the requests (CPU time).

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_read_cost \
        BENCH_REDIS_URL=redis://127.0.0.1:6379/12 \
        .venv/bin/python bench/read_cost.py PATH --header 'api-key: KEY' [--requests 500] \
        [--rounds 3] [--sql] [--profile 40]

    .venv/bin/python bench/read_cost.py --ledger    # (same variables) a ledger merchant's key

``--ledger`` makes, on first use, a merchant with the suite's 10,000 fundings and 30 staff
credits and debits (two of them in the last hour, so its first page mixes both kinds of row),
and prints a new LEDGER_READ key and the paths of its list and of one of its fundings. Rate
limits are lifted (the requests still count in the gate's round trip). Each round prints the
mean CPU of ``--requests`` requests (the process's and the request thread's; the figures that
matter on a shared machine are the lowest of a few rounds and the counts, which do not move).
"""

import argparse
import cProfile
import pstats
import random
import re
import sys
import time
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))

from harness import ensure_database, processes_cpu, setup_django

LEDGER_MERCHANT = "read cost ledger"
STAFF_ROWS = 30
RECENT_STAFF_ROWS = 2


def _load_ledger(merchants: list) -> None:  # type: ignore[type-arg]
    from suite_data import _copy_fundings

    from core import clock
    from wallet.models import Transfer
    from wallet.services import wallet_admin_credit, wallet_admin_debit

    _copy_fundings(merchants)
    (merchant,) = merchants
    rng = random.Random(32)
    now = clock.now()
    for n in range(STAFF_ROWS):
        if n % 3 == 2:
            transfer = wallet_admin_debit(merchant=merchant, amount=Decimal(1), reason="bench")
        else:
            transfer = wallet_admin_credit(merchant=merchant, amount=Decimal(2), reason="bench")
        ago = timedelta(minutes=n) if n < RECENT_STAFF_ROWS else timedelta(days=rng.uniform(1, 365))
        Transfer.objects.filter(pk=transfer.pk).update(created_at=now - ago)


def ledger_access() -> tuple[str, list[str]]:
    """The ledger merchant's new key as a header, and the paths of its two reads."""
    from tradedata import loaded_merchants

    from ledger.models import Funding
    from merchants.models import Scope
    from merchants.services import api_key_create

    (merchant,) = loaded_merchants(LEDGER_MERCHANT, 1, _load_ledger, "ledger_funding")
    _, key = api_key_create(merchant=merchant, scopes=[Scope.LEDGER_READ])
    funding = Funding.objects.filter(merchant=merchant).order_by("id").values_list("id", flat=True)
    return f"api-key: {key}", ["/v1/ledger/transactions", f"/v1/ledger/transactions/{funding[0]}"]


def _counting() -> Counter[str]:
    """Counts Redis replies read (round trips: a script's or an MGET's is one) and database
    transactions ended (each a BEGIN and a COMMIT round trip besides its statements)."""
    from django.db.backends.base.base import BaseDatabaseWrapper
    from redis.connection import AbstractConnection

    counts: Counter[str] = Counter()

    def counting(cls: Any, name: str, what: str) -> None:
        method = getattr(cls, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[what] += 1
            return method(*args, **kwargs)

        setattr(cls, name, counted)

    counting(AbstractConnection, "read_response", "Redis round trips")
    counting(BaseDatabaseWrapper, "_commit", "transactions")
    counting(BaseDatabaseWrapper, "_rollback", "transactions")
    return counts


def postgres_cpu() -> float:
    """CPU seconds used so far by the backends connected to the bench database (this process's
    alone, on a database of its own), read from /proc."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()] + [connection.connection.info.backend_pid]
    return processes_cpu(pids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--header", action="append", default=[], help="'Name: value'")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sql", action="store_true", help="print one request's statements")
    parser.add_argument("--profile", type=int, metavar="LINES", help="cProfile (CPU time)")
    parser.add_argument("--body", help="write the body, without its requestId, to this file")
    parser.add_argument("--ledger", action="store_true", help="print a ledger merchant's access")
    args = parser.parse_args()
    ensure_database()
    setup_django()
    if args.ledger:
        header, paths = ledger_access()
        print(header, *paths, sep="\n")
        return
    if not args.path:
        parser.error("a path to read (or --ledger)")

    from django.db import connection
    from django.test import Client
    from reads import _recorder, _unlimited

    _unlimited()
    headers = dict(tuple(part.strip() for part in h.split(":", 1)) for h in args.header)
    http = Client()
    for _ in range(30):
        response = http.get(args.path, headers=headers)
        assert response.status_code == 200, response.content
    counts = _counting()
    queries: list[str] = []
    with connection.execute_wrapper(_recorder(queries)):
        http.get(args.path, headers=headers)
    counted = ", ".join(f"{n} {what}" for what, n in counts.items())
    print(
        f"{args.path}: {len(response.content):,} bytes; one request: {len(queries)} statements"
        f"{', ' if counted else ''}{counted}"
    )
    if args.sql:
        print("\n".join(queries))
    if args.body:  # to compare two checkouts byte for byte
        Path(args.body).write_bytes(re.sub(rb'"requestId":"[^"]*"', b"", response.content))
    for _ in range(args.rounds):
        postgres = postgres_cpu()
        cpu, own = time.process_time(), time.thread_time()
        for _ in range(args.requests):
            http.get(args.path, headers=headers)
        cpu = (time.process_time() - cpu) / args.requests * 1000
        own = (time.thread_time() - own) / args.requests * 1000
        postgres = (postgres_cpu() - postgres) / args.requests * 1000
        print(
            f"CPU ms/request: {cpu:.3f} Python (the request's thread {own:.3f}),"
            f" {postgres:.3f} PostgreSQL",
            flush=True,
        )
    if args.profile:
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        for _ in range(args.requests):
            http.get(args.path, headers=headers)
        profile.disable()
        stats = pstats.Stats(profile).sort_stats("cumulative")
        stats.print_stats(args.profile)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
