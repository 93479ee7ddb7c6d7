"""Database helpers: migrations' PostgreSQL-only steps, the connection pool after a failover."""

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
