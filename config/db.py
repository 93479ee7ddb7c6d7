"""Database helpers: migration steps, locks, the connection pool after a failover."""

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from django.db import connection

logger = logging.getLogger(__name__)


def on_postgresql(sql: str) -> Callable[[Any, Any], None]:
    """A RunPython body executing ``sql`` on PostgreSQL only (the quick start runs SQLite)."""

    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


def advisory_lock(name: str) -> None:
    """Hold a transaction-scoped lock on ``name`` until the surrounding transaction ends: callers
    serialize on something that has no row of its own (one person's deposits, say). On SQLite,
    which the quick start runs, writers are serialized by the database already."""
    if connection.vendor != "postgresql":
        return
    key = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def pooled_connections_recheck() -> None:
    """After a lost connection: test the pool's idle connections now and replace the dead ones.
    A failover cuts every connection at once; unchecked, each dead one would be lent to one more
    request and fail it. A no-op without a pool (SQLite, ``DB_POOL=false``)."""
    pool = getattr(connection, "pool", None)
    if pool is None:
        return
    try:
        pool.check()
    except Exception as exc:  # the database is still away: the next failure checks again
        logger.warning("connection pool check failed: %s", exc)
