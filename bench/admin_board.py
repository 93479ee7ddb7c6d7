"""The console's home (the attention board, issue 40) over ten million trades: how long each
section takes to count, the whole home page through Django (the app list included), the lists
its counts open, and the same counts with the board's indexes dropped (in a transaction rolled
back), to show what the indexes buy. Figures in bench/README.md, "The console's home".

    .venv/bin/python bench/admin_board.py [--trades 10000000] [--repeat 20]

Uses its own database, ``trading_admin_bench`` (BENCH_ADMIN_DATABASE_URL overrides it), created
and migrated on first use, and Redis database 9 (BENCH_ADMIN_REDIS_URL). The rows are made by
PostgreSQL (``INSERT ... SELECT ... generate_series``, tests/admin/volume.py), never the ORM:
the trades one a second back from now (the newest 20,000 in flight, one in 50,021 of the older
ones left in flight long ago: the stuck ones the board exists for), one webhook event per trade
(one in 2,000 given up on, one in 5,000 retrying) and a million cashouts (300 waiting). The
secondary indexes of the trades and events are dropped during the load and built again after
it, as a bulk load is done; the time of building the board's own trade index is printed, as
its migration (CREATE INDEX CONCURRENTLY) would take it."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATABASE_URL = os.environ.get(
    "BENCH_ADMIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/trading_admin_bench"
)
REDIS_URL = os.environ.get("BENCH_ADMIN_REDIS_URL", "redis://127.0.0.1:6379/9")
IN_FLIGHT = 20_000
STUCK_EVERY = 50_021  # prime: the stuck trades take every state in turn
BATCH = 1_000_000
CASHOUTS, CASHOUTS_WAITING = 1_000_000, 300
# The board's indexes: dropped (and the drop rolled back) for the "without" figures.
BOARD_INDEXES = (
    "trade_in_flight_since",
    "trade_hold_end",
    "webhook_event_failed",
    "withdrawal_waiting",
)


def setup() -> None:
    os.environ.update(
        DATABASE_URL=DATABASE_URL,
        REDIS_URL=REDIS_URL,
        SECRET_KEY="bench-only-insecure-secret-key",
        SANDBOX="true",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    sys.path.insert(0, str(ROOT))
    name = DATABASE_URL.rsplit("/", 1)[1]
    exists = subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{name}'",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if exists != "1":
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {name}"],
            check=True,
        )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v0"], cwd=ROOT, check=True
    )
    import django

    django.setup()


@contextmanager
def secondary_indexes_dropped(table: str) -> Iterator[None]:
    """A bulk load's way: the table's indexes that back no constraint are dropped, then built
    again from their definitions."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT IN"
            " (SELECT conname FROM pg_constraint)",
            [table],
        )
        kept = cursor.fetchall()
        for name, _ in kept:
            cursor.execute(f'DROP INDEX "{name}"')
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for name, definition in kept:
                started = time.perf_counter()
                cursor.execute(definition)
                print(f"  index {name} built in {time.perf_counter() - started:.1f} s")


def fill(trades: int) -> None:
    from django.db import connection

    from crypto.models import CryptoWithdrawal
    from merchants.models import Merchant
    from merchants.services import merchant_create
    from merchants.webhooks.models import WebhookEvent
    from tests.admin.volume import cycle, rows_fill, trade_columns
    from trading.models import Trade

    if Trade.objects.count() == trades:
        return
    print(f"filling {trades:,} trades (and as many webhook events), once")
    Trade.objects.all().delete()
    WebhookEvent.objects.all().delete()
    CryptoWithdrawal.objects.all().delete()
    merchant = Merchant.objects.filter(name="board bench").first() or merchant_create(
        name="board bench", is_verified=True
    )
    mid = str(merchant.pk)
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")  # a load, not money: no fsync per batch
    with secondary_indexes_dropped("trading_trade"):
        for start in range(0, trades, BATCH):
            count = min(BATCH, trades - start)
            columns = trade_columns(merchant_id=mid, in_flight=IN_FLIGHT, stuck_every=STUCK_EVERY)
            began = time.perf_counter()
            rows_fill(Trade, count, **_offset(columns, start))
            print(f"  trades {start + count:,} ({time.perf_counter() - began:.1f} s)")
    with secondary_indexes_dropped("merchants_webhookevent"):
        for start in range(0, trades, BATCH):
            count = min(BATCH, trades - start)
            began = time.perf_counter()
            rows_fill(
                WebhookEvent,
                count,
                **_offset(
                    {
                        "merchant": f"'{mid}'",
                        "type": "'trade.completed'",
                        "subject_type": "'trade'",
                        "subject_id": "n::text",
                        "sequence": "1",
                        "payload": "'{}'::jsonb",
                        "status": "CASE WHEN mod(n, 2000) = 0 THEN 'failed'"
                        " WHEN mod(n, 5000) = 1 THEN 'pending' ELSE 'delivered' END",
                        "attempts": "CASE WHEN mod(n, 5000) = 1 THEN 2 ELSE 1 END",
                        "next_attempt_at": "CASE WHEN mod(n, 5000) = 1 THEN now() END",
                        "created_at": "now() - n * interval '1 second'",
                    },
                    start,
                ),
            )
            print(f"  webhook events {start + count:,} ({time.perf_counter() - began:.1f} s)")
    rows_fill(
        CryptoWithdrawal,
        CASHOUTS,
        merchant=f"'{mid}'",
        platform_id="'76561197960265729'",
        source="'self'",
        request_id="'req-' || n",
        chain="'ETH'",
        token="'USDC'",
        address="'0x000000000000000000000000000000000000dEaD'",
        amount_cents="2500",
        fee_cents="100",
        receive_cents="2400",
        locked="0",
        status=f"CASE WHEN n <= {CASHOUTS_WAITING} THEN "
        + cycle(["in_review", "approved", "awaiting_approval"])
        + " ELSE 'completed' END",
        created_at="now() - n * interval '10 seconds'",
        updated_at="now() - n * interval '10 seconds'",
    )
    with connection.cursor() as cursor:
        for table in ("trading_trade", "merchants_webhookevent", "crypto_cryptowithdrawal"):
            began = time.perf_counter()
            cursor.execute(f"VACUUM ANALYZE {table}")
            print(f"  VACUUM ANALYZE {table} ({time.perf_counter() - began:.1f} s)")


def _offset(columns: dict[str, str], start: int) -> dict[str, str]:
    """The row numbers of a batch continue the previous batch's: ``n`` becomes ``n + start``."""
    if not start:
        return columns
    return {k: re.sub(r"\bn\b", f"(n + {start})", v) for k, v in columns.items()}


def timed(work: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median and worst of ``repeat`` runs, in milliseconds (one warm-up run first)."""
    work()
    runs = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        runs.append((time.perf_counter() - began) * 1000)
    return statistics.median(runs), max(runs)


def sections(repeat: int) -> dict[str, tuple[float, float]]:
    from core.admin_board import BOARD_SECTIONS

    return {section.slug: timed(section.rows, repeat) for section in BOARD_SECTIONS}


def report(repeat: int) -> None:
    from django.contrib.auth.models import User
    from django.db import connection, transaction
    from django.test import Client

    from trading.models import IN_FLIGHT as IN_FLIGHT_STATES
    from trading.models import Trade
    from trading.selectors.attention import WATCHED

    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'trading_trade'")
        print(f"\ntrades: about {cursor.fetchone()[0]:,}")
    print(f"in flight: {Trade.objects.filter(status__in=IN_FLIGHT_STATES).count():,}")
    staff = User.objects.filter(username="bench-staff").first() or User.objects.create_superuser(
        "bench-staff", "bench@example.com", "x"
    )
    client = Client()
    client.force_login(staff)

    with_indexes = sections(repeat)
    home = timed(lambda: client.get("/admin/"), repeat)
    every_trade = timed(lambda: client.get("/admin/trading/trade/"), repeat)
    lists = {
        key: timed(lambda key=key: client.get("/admin/trading/trade/", {"overdue": key}), repeat)
        for key in WATCHED
    }
    with transaction.atomic():
        with connection.cursor() as cursor:
            for index in BOARD_INDEXES:
                cursor.execute(f'DROP INDEX "{index}"')
        without = sections(max(1, repeat // 10))
        transaction.set_rollback(True)

    print(
        f"\nboard sections, median / worst of {repeat} (without the board's indexes: "
        f"median of {max(1, repeat // 10)}), ms\n"
    )
    print(f"    {'section':<12} {'median':>9} {'worst':>9} {'without':>11}")
    for slug, (median, worst) in with_indexes.items():
        print(f"    {slug:<12} {median:>9.2f} {worst:>9.2f} {without[slug][0]:>11.1f}")
    total = sum(median for median, _ in with_indexes.values())
    print(f"    {'all':<12} {total:>9.2f} {'':>9} {sum(m for m, _ in without.values()):>11.1f}")
    print(
        f"\nthe home page (GET /admin/, rendered): median {home[0]:.1f} ms, worst {home[1]:.1f} ms"
    )
    print(
        f"the list of every trade (GET /admin/trading/trade/): median {every_trade[0]:.1f} ms,"
        f" worst {every_trade[1]:.1f} ms"
    )
    print("\nthe list each trade count opens (GET /admin/trading/trade/?overdue=...), ms:\n")
    for key, (median, worst) in lists.items():
        print(f"    {key:<20} {median:>8.1f} {worst:>8.1f}")
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX CONCURRENTLY IF EXISTS bench_in_flight_since")
        began = time.perf_counter()
        cursor.execute(
            "CREATE INDEX CONCURRENTLY bench_in_flight_since ON trading_trade"
            " (type, status, updated_at) WHERE status IN ('initiated', 'pending', 'active', 'hold')"
        )
        built = time.perf_counter() - began
        cursor.execute("DROP INDEX CONCURRENTLY bench_in_flight_since")
    print(f"\nCREATE INDEX CONCURRENTLY of trade_in_flight_since's definition: {built:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trades", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    setup()
    fill(args.trades)
    report(args.repeat)


if __name__ == "__main__":
    main()
