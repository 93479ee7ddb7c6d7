"""The limit app (``bench/limitapp``): its tables in the bench database, its server, and the
requests that measure its endpoints. Every project endpoint is reported as a share of the
limit of its kind measured in the same run (``bench/README.md``, "Limits")."""

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from harness import ROOT, Request, Web, celery_argvs, celery_workers, web
from limitapp import ACCOUNTS, LISTINGS, PAGE_COLUMNS, PAGE_ROWS_PER_ACCOUNT

LIMIT_PORT = 8099
# Which limit each kind of endpoint is compared with.
NO_IO, READ, WRITE, PAGE, BUY = "no-io", "read", "write", "page", "buy"
LIMIT_PATHS = {
    NO_IO: "/limit/no-io",
    READ: "/limit/read",
    WRITE: "/limit/write",
    PAGE: "/limit/page",
    BUY: "/limit/buy",
}
LIMIT_LABELS = {
    NO_IO: "limit: header check + envelope, no I/O",
    READ: "limit: + one Redis round trip + one PostgreSQL query (read limit)",
    WRITE: "limit: + Redis + one transaction, insert + guarded update (write limit)",
    PAGE: "limit: + Redis + one query, a page of 20 rows x 35 columns (page limit)",
    BUY: "limit: + Redis + one transaction, 5 inserts + 2 balance moves (buy limit)",
}
_TABLES = f"""
CREATE TABLE IF NOT EXISTS bench_limit_account (
    id integer PRIMARY KEY,
    name text NOT NULL,
    balance numeric(20, 2) NOT NULL CHECK (balance >= 0)
);
CREATE TABLE IF NOT EXISTS bench_limit_entry (
    id bigserial PRIMARY KEY,
    account_id integer NOT NULL REFERENCES bench_limit_account (id),
    amount numeric(20, 2) NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO bench_limit_account (id, name, balance)
SELECT n, 'account ' || n, 1000000000000 FROM generate_series(0, {2 * ACCOUNTS - 1}) AS n
ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance;
CREATE TABLE IF NOT EXISTS bench_limit_trade (
    id uuid PRIMARY KEY,
    account_id integer NOT NULL REFERENCES bench_limit_account (id),
    status text NOT NULL,
    total numeric(20, 2) NOT NULL,
    trade_url text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS bench_limit_item (
    id bigserial PRIMARY KEY,
    trade_id uuid NOT NULL REFERENCES bench_limit_trade (id),
    listing text NOT NULL,
    price numeric(20, 2) NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_limit_transfer (
    id bigserial PRIMARY KEY,
    kind text NOT NULL,
    cause_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS bench_limit_posting (
    id bigserial PRIMARY KEY,
    transfer_id bigint NOT NULL REFERENCES bench_limit_transfer (id),
    account_id integer NOT NULL REFERENCES bench_limit_account (id),
    amount numeric(20, 2) NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_limit_event (
    id uuid PRIMARY KEY,
    account_id integer NOT NULL REFERENCES bench_limit_account (id),
    kind text NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL DEFAULT 'pending',
    created_at timestamptz NOT NULL DEFAULT now()
);
-- The pipeline limit's (issue 43): the listings it buys from, each item's purchase, the trade
-- each event is about.
CREATE TABLE IF NOT EXISTS bench_limit_listing (
    id text PRIMARY KEY,
    price numeric(20, 2) NOT NULL,
    amount bigint NOT NULL CHECK (amount >= 0)
);
INSERT INTO bench_limit_listing (id, price, amount)
SELECT 'listing-' || n, 1, 1000000000 FROM generate_series(0, {LISTINGS - 1}) AS n
ON CONFLICT (id) DO UPDATE SET amount = EXCLUDED.amount;
ALTER TABLE bench_limit_item ADD COLUMN IF NOT EXISTS purchase_ref text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS bench_limit_item_trade ON bench_limit_item (trade_id);
ALTER TABLE bench_limit_event ADD COLUMN IF NOT EXISTS trade_id uuid;
"""


def _page_table() -> str:
    """The page limit's table, filled once: PAGE_ROWS_PER_ACCOUNT rows per account."""
    columns = ",\n    ".join(
        f"{name} {kind} NOT NULL" + (" PRIMARY KEY" if name == "id" else "")
        for name, kind in PAGE_COLUMNS
    )
    values = {
        "text": "'value ' || n || ' of a page row'",
        "numeric(20, 2)": "(n % 1000) + 0.5",
        "timestamptz": "now() - n * interval '7 seconds'",
        "integer": "n % 997",
        "uuid": "gen_random_uuid()",
        "boolean": "n % 2 = 0",
        "jsonb": """jsonb_build_object('name', 'AK-47 | Redline', 'n', n)""",
    }
    keys = {"id": "n", "account_id": f"n % {ACCOUNTS}"}
    filled = ", ".join(keys[name] if name in keys else values[kind] for name, kind in PAGE_COLUMNS)
    return f"""
CREATE TABLE IF NOT EXISTS bench_limit_row (
    {columns}
);
CREATE INDEX IF NOT EXISTS bench_limit_row_page ON bench_limit_row (account_id, at_0 DESC, id DESC);
INSERT INTO bench_limit_row SELECT {filled}
FROM generate_series(0, {ACCOUNTS * PAGE_ROWS_PER_ACCOUNT - 1}) AS n
WHERE NOT EXISTS (SELECT 1 FROM bench_limit_row);
"""


def limit_tables_ensure() -> None:
    """The limit app's tables, every account's balance topped up (run from the bench's Django
    process, on the bench database)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(_TABLES)
        cursor.execute(_page_table())
        cursor.execute("VACUUM ANALYZE bench_limit_row")


# The limit app's processes: its settings, and bench/ on the path for ``limitapp``.
LIMIT_ENV = {
    "DJANGO_SETTINGS_MODULE": "limitapp.settings",
    "PYTHONPATH": f"{ROOT / 'bench'}:{ROOT}",
}


@contextmanager
def limit_server(
    *, server: str, workers: int, threads: int, worker_connections: int
) -> Iterator[Web]:
    """The limit app served as the project is: same server, processes and threads."""
    with web(
        app="limitapp.wsgi:application",
        server=server,
        workers=workers,
        threads=threads,
        port=LIMIT_PORT,
        worker_connections=worker_connections,
        env=LIMIT_ENV,
    ) as served:
        yield served


@contextmanager
def limit_worker(callback_url: str) -> Iterator[subprocess.Popen[bytes]]:
    """The pipeline limit's Celery worker (limitapp.celery), run as the service's is (the same
    processes and threads; no beat: the limit has no sweeps); yields its process tree's root."""
    argvs = celery_argvs("limitapp.celery", hostname="limit", beat=False)
    with celery_workers(argvs, {**LIMIT_ENV, "LIMIT_CALLBACK_URL": callback_url}) as worker:
        yield worker


def limit_lines(kind: str) -> list[Request]:
    """One request per account, in turn."""
    path = LIMIT_PATHS[kind]
    if kind == WRITE:
        body = json.dumps({"amount": 1})
        return [Request("POST", path, {"api-key": f"limit-key-{n}"}, body) for n in range(ACCOUNTS)]
    if kind == BUY:
        return [
            Request(
                "POST",
                path,
                {"api-key": f"limit-key-{n}"},
                json.dumps({"amount": 1, "itemId": f"listing-{n}", "tradeUrl": "https://x/?t=1"}),
            )
            for n in range(ACCOUNTS)
        ]
    return [Request("GET", path, {"api-key": f"limit-key-{n}"}) for n in range(ACCOUNTS)]


PIPELINE_PATH = "/limit/buy-pipeline"


def pipeline_lines(count: int) -> list[Request]:
    """``count`` buys of the pipeline limit, each of another listing, the accounts in turn."""
    return [
        Request(
            "POST",
            PIPELINE_PATH,
            {"api-key": f"limit-key-{n % ACCOUNTS}"},
            json.dumps(
                {"amount": 1, "itemId": f"listing-{n % LISTINGS}", "tradeUrl": "https://x/?t=1"}
            ),
        )
        for n in range(count)
    ]
