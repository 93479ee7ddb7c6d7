"""The test database as other processes reach it, row locks held from outside the service, and
what PostgreSQL says its backends are doing."""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import psycopg
from django.db import connection

# The application_name (libpq's PGAPPNAME) of every process a fault test starts.
SERVICE_APPLICATION = "trading-service-under-test"


def database_url() -> str:
    """The URL of the database this test runs on (pytest-django's ``test_<name>``)."""
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return (
        f"postgres://{user}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    )


class RowLock:
    """A transaction of another client holding ``FOR UPDATE`` locks until released."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    @property
    def pid(self) -> int:
        return self.conn.info.backend_pid

    def release(self) -> None:
        if not self.conn.closed:
            self.conn.rollback()


@contextmanager
def rows_locked(table: str, ids: Sequence[object]) -> Iterator[RowLock]:
    """Locks rows of ``table`` (a fixed name from the test, never input) by primary key."""
    with psycopg.connect(database_url()) as conn:
        conn.execute(f'SELECT 1 FROM "{table}" WHERE id = ANY(%s) FOR UPDATE', [list(ids)])
        lock = RowLock(conn)
        try:
            yield lock
        finally:
            lock.release()


def backends_waiting_on_lock(statement_prefix: str) -> list[int]:
    """Backends of this database blocked on a lock while running a statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE %s",
            [statement_prefix + "%"],
        )
        return [row[0] for row in cursor.fetchall()]


def backends_alive(pids: Sequence[int]) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", [list(pids)])
        return [row[0] for row in cursor.fetchall()]


def backends_terminate() -> int:
    """What a database failover does to its clients: every connection the processes under test
    hold to this database is cut (the test's own are left alone). Returns how many were."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [SERVICE_APPLICATION],
        )
        terminated: int = cursor.fetchone()[0]
    return terminated
