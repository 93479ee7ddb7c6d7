"""GET /v1/ledger/transactions over a merchant with 100,000 ledger rows (fundings of every type
and status plus staff credits and debits), beside a second merchant with as many: the time of
the page query and of the count, per query shape, and the plans PostgreSQL picks.

    DATABASE_URL=postgres://... REDIS_URL=... SECRET_KEY=... SANDBOX=true \
        .venv/bin/python bench/ledger.py [--rows 100000] [--repeat 20]

Seeds the rows on first use (merchants named "ledger bench ..."). Times are the median of
``--repeat`` calls, through the whole HTTP stack (Django's test client, no network), and of each
SQL statement of the read (the page's ids, their rows, the count; "-": not needed).

2026-11-21, 2 cores shared with four other sessions (load average about 5), PostgreSQL 15,
99,000 fundings + 1,000 staff credits/debits + 50,000 lock transfers on the measured merchant
(90,036 rows visible: the rest are INITIATED and older than 24 hours), as many on a neighbour;
``--repeat 30``:

    query                         request      p90     ids    rows   count  total
    first page                     71.4ms   80.8ms    2.0ms    3.0ms   42.0ms  90036
    page 2 (offset 50)             69.9ms   77.2ms    2.0ms    3.0ms   41.5ms  90036
    limit 100                      73.1ms   81.9ms    2.0ms    5.0ms   38.5ms  90036
    offset 50,000                  66.6ms   83.6ms   13.0ms    2.0ms   33.5ms  90036
    last page (offset 99,950)      67.4ms   92.1ms   23.0ms   31.0ms       -   90036
    status=COMPLETED               63.8ms   75.0ms    2.0ms    4.0ms   33.0ms  10951
    type=DEPOSIT                   48.8ms   52.1ms    1.0ms    2.0ms   30.0ms  22427
    type=REFUND&status=PENDING     60.4ms   62.9ms    2.0ms    3.0ms   33.0ms  3470
    last 30 days                   26.3ms   34.1ms    1.0ms    3.0ms    4.0ms  8642
    one day, date-times            27.2ms   30.8ms    1.0ms    3.0ms    1.0ms  246

The exact total (an index-only count of every matching row) is the biggest part of a request
over a long history; the page itself is a few milliseconds at any depth.
"""

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADMIN_ROWS = 1_000
# Trading traffic on the same wallet (locks and releases): postings the admin rows must not scan.
TRADE_TRANSFERS = 50_000


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def seed(name: str, rows: int) -> str:
    """A merchant with ``rows`` fundings over the last year and ADMIN_ROWS staff credits and
    debits; returns a LEDGER_READ key."""
    from core import clock
    from ledger.models import Funding
    from merchants.models import Merchant, Scope
    from merchants.services import api_key_create, merchant_create
    from wallet.services import wallet_admin_credit, wallet_admin_debit

    merchant = Merchant.objects.filter(name=name).first()
    if merchant is None:
        merchant = merchant_create(name=name, is_verified=True)
        now = clock.now()
        randomness = random.Random(name)
        types = Funding.Type.values
        statuses = Funding.Status.values
        batch = []
        for n in range(rows - ADMIN_ROWS):
            created = now - timedelta(seconds=randomness.randrange(365 * 86400))
            kind = randomness.choice(types)
            amount = Decimal(randomness.randrange(100, 1_000_000)) / 100
            batch.append(
                Funding(
                    merchant=merchant,
                    type=kind,
                    status=randomness.choice(statuses),
                    amount_usd=-amount if kind == "INTERNAL_TRANSFER" and n % 2 else amount,
                    amount_crypto=amount,
                    token="USDT",
                    chain="ETH",
                    address="0x" + uuid.uuid4().hex + "00000000",
                    txn_hash="0x" + uuid.uuid4().hex * 2,
                    source_type="bench",
                    source_id=str(uuid.uuid4()),
                    created_at=created,
                    updated_at=created,
                )
            )
            if len(batch) == 5_000:
                Funding.objects.bulk_create(batch)
                batch = []
        Funding.objects.bulk_create(batch)
        for n in range(ADMIN_ROWS):
            if n % 4 == 3:
                wallet_admin_debit(merchant=merchant, amount=Decimal(1), reason="bench")
            else:
                wallet_admin_credit(merchant=merchant, amount=Decimal(2), reason="bench")
        trading_traffic(merchant)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE ledger_funding")
        cursor.execute("ANALYZE wallet_transfer")
        cursor.execute("ANALYZE wallet_posting")
    _, key = api_key_create(merchant=merchant, scopes=[Scope.LEDGER_READ])
    return key


def trading_traffic(merchant: object) -> None:
    """Balanced lock transfers written in bulk (the running balances are left alone: the bench
    reads the ledger, not balances)."""
    from core import clock
    from wallet.models import Account, Posting, Transfer
    from wallet.services import account_get

    available = account_get(merchant=merchant, kind=Account.Kind.AVAILABLE)
    locked = account_get(merchant=merchant, kind=Account.Kind.LOCKED)
    now = clock.now()
    for start in range(0, TRADE_TRANSFERS, 5_000):
        transfers = Transfer.objects.bulk_create(
            Transfer(kind="LOCK", cause_type="trade_item", cause_id=str(n), created_at=now)
            for n in range(start, start + 5_000)
        )
        Posting.objects.bulk_create(
            Posting(transfer=transfer, account=account, amount=amount)
            for transfer in transfers
            for account, amount in ((available, Decimal(-1)), (locked, Decimal(1)))
        )


def _statements(captured: list[dict[str, str]]) -> list[dict[str, str]]:
    """The read's own statements: after its statement timeout is set, up to COMMIT."""
    first = next(n for n, q in enumerate(captured) if "statement_timeout" in q["sql"])
    return [q for q in captured[first + 1 :] if q["sql"] != "COMMIT"]


def measure(key: str, repeat: int) -> None:
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    month_ago = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 30 * 86400))
    shapes = {
        "first page": "",
        "page 2 (offset 50)": "?offset=50",
        "limit 100": "?limit=100",
        "offset 50,000": "?offset=50000",
        "last page (offset 99,950)": "?offset=99950",
        "status=COMPLETED": "?status=COMPLETED",
        "type=DEPOSIT": "?type=DEPOSIT",
        "type=REFUND&status=PENDING": "?type=REFUND&status=PENDING",
        "last 30 days": "?startDate=" + month_ago,
        "one day, date-times": "?startDate=2026-06-01T00:00:00Z&endDate=2026-06-01T23:59:59Z",
    }
    print(f"{'query':28} {'request':>8} {'p90':>8} {'ids':>7} {'rows':>7} {'count':>7}  total")
    for label, query in shapes.items():
        timings = []
        sql: dict[str, list[float]] = {"ids": [], "rows": [], "count": []}
        total = 0
        for _ in range(repeat):
            reset_queries()  # the log is a bounded deque: a full one breaks the capture
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = client.get(f"/v1/ledger/transactions{query}", headers={"api-key": key})
                timings.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.content
            total = response.json()["data"]["pagination"]["total"]
            for name, statement in zip(sql, _statements(captured.captured_queries), strict=False):
                sql[name].append(float(statement["time"]) * 1000)
        median = statistics.median(timings)
        p90 = sorted(timings)[int(len(timings) * 0.9)]
        parts = " ".join(
            f"{statistics.median(times):6.1f}ms" if times else "      - " for times in sql.values()
        )
        print(f"{label:28} {median:6.1f}ms {p90:6.1f}ms {parts}  {total}")


def explain(merchant_name: str) -> None:
    """The plans of the first page's statements (ids, rows, count)."""
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from core import clock
    from ledger.selectors import LedgerQuery, ledger_page
    from merchants.models import Merchant

    merchant = Merchant.objects.get(name=merchant_name)
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        ledger_page(merchant=merchant, query=LedgerQuery(), now=clock.now())
    for statement in _statements(captured.captured_queries):
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement["sql"])
            print()
            for (line,) in cursor.fetchall():
                print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args()
    setup()
    from django.conf import settings

    settings.DEBUG = True  # keeps the SQL timings
    settings.ALLOWED_HOSTS = ["*"]
    from ledger.apis import LedgerTransactionsApi
    from merchants.ratelimits import Limited, Rate, Rates

    unlimited = Rate(10**9, 60)
    LedgerTransactionsApi.rate_limit = Limited(
        "ledger.transactions", Rates(unlimited, unlimited), shared="bench"
    )
    seed("ledger bench neighbour", args.rows)
    key = seed("ledger bench", args.rows)
    measure(key, args.repeat)
    if args.explain:
        explain("ledger bench")


if __name__ == "__main__":
    main()
