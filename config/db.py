"""Database helpers shared by migrations."""

from collections.abc import Callable
from typing import Any


def on_postgresql(sql: str) -> Callable[[Any, Any], None]:
    """A RunPython body executing ``sql`` on PostgreSQL only (the quick start runs SQLite)."""

    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run
