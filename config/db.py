"""Database helpers: migration steps and locks."""

import hashlib
from collections.abc import Callable
from typing import Any


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
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    key = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
