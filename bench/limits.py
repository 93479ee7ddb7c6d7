"""The limit app (``bench/limitapp``): its tables in the bench database, its server, and the
requests that measure its three endpoints. Every project endpoint is reported as a share of the
limit of its kind measured in the same run (``bench/README.md``, "Limits")."""

import json
from collections.abc import Iterator
from contextlib import contextmanager

from harness import ROOT, Request, Web, web
from limitapp import ACCOUNTS

LIMIT_PORT = 8099
# Which limit each kind of endpoint is compared with.
NO_IO, READ, WRITE = "no-io", "read", "write"
LIMIT_PATHS = {NO_IO: "/limit/no-io", READ: "/limit/read", WRITE: "/limit/write"}
LIMIT_LABELS = {
    NO_IO: "limit: header check + envelope, no I/O",
    READ: "limit: + one Redis round trip + one PostgreSQL query (read limit)",
    WRITE: "limit: + Redis + one transaction, insert + guarded update (write limit)",
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
SELECT n, 'account ' || n, 1000000000000 FROM generate_series(0, {ACCOUNTS - 1}) AS n
ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance;
"""


def limit_tables_ensure() -> None:
    """The limit app's two tables, every account's balance topped up (run from the bench's
    Django process, on the bench database)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(_TABLES)


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
        env={
            "DJANGO_SETTINGS_MODULE": "limitapp.settings",
            "PYTHONPATH": f"{ROOT / 'bench'}:{ROOT}",
        },
    ) as served:
        yield served


def limit_lines(kind: str) -> list[Request]:
    """One request per account, in turn."""
    path = LIMIT_PATHS[kind]
    if kind == WRITE:
        body = json.dumps({"amount": 1})
        return [Request("POST", path, {"api-key": f"limit-key-{n}"}, body) for n in range(ACCOUNTS)]
    return [Request("GET", path, {"api-key": f"limit-key-{n}"}) for n in range(ACCOUNTS)]
