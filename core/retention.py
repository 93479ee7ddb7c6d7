"""Rows kept only for a while (docs/ops/retention.md): each table's purge deletes the rows past
their retention oldest first, in small batches walked along an indexed time column, each batch
its own short transaction, until none is left or the run's time budget is spent. A table's app
declares what of it may go (``Retention``) and calls ``rows_purge`` from its own beat task."""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, Model

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retention:
    """Rows of ``model`` whose ``column`` is before the cutoff, oldest first. ``condition`` is
    SQL on the row (alias ``t``) that a row must also meet; it should be the predicate of a
    partial index on ``column``, so that rows kept for ever never stay in the walk. ``children``
    are (model, foreign-key field) of rows that belong to a purged row and go with it."""

    model: type[Model]
    column: str
    condition: str = ""
    children: Sequence[tuple[type[Model], str]] = ()


def retention_cutoff(*, now: datetime, days: int) -> datetime | None:
    """Rows older than ``days`` days go; 0 keeps them for ever (None: nothing to purge)."""
    return now - timedelta(days=days) if days > 0 else None


def _quoted(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)
    return connection.ops.quote_name(field.column)


def _statements(retention: Retention, *, resumed: bool) -> list[str]:
    """One batch, answering how many rows it deleted and the newest time among them. A batch
    after the first (``resumed``) starts at that time: the walk along the index never steps
    again over the entries of rows the run deleted (dead until vacuum reaches them) or kept. On
    PostgreSQL one statement (the rows chosen once, the children deleted with them); elsewhere
    (SQLite, the quick start: a single writer whose transaction sees one state) a statement per
    table in a transaction, each choosing the same rows."""
    model = retention.model
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(model._meta.pk.column)
    column = _quoted(model, retention.column)
    since = f" AND t.{column} >= %s" if resumed else ""
    condition = f" AND ({retention.condition})" if retention.condition else ""
    # Rows another transaction holds (a webhook re-sent now) are passed over, not waited for.
    lock = (
        " FOR UPDATE OF t SKIP LOCKED"
        if connection.features.has_select_for_update_skip_locked
        else ""
    )
    chosen = (
        f"SELECT t.{pk}, t.{column} FROM {table} t WHERE t.{column} < %s{since}{condition}"  # noqa: S608
        f" ORDER BY t.{column} LIMIT %s{lock}"
    )
    children = [
        (connection.ops.quote_name(child._meta.db_table), _quoted(child, field))
        for child, field in retention.children
    ]
    if connection.vendor == "postgresql":
        cascade = "".join(
            f", gone_{n} AS (DELETE FROM {child} WHERE {fk} IN (SELECT {pk} FROM chosen))"  # noqa: S608
            for n, (child, fk) in enumerate(children)
        )
        return [
            f"WITH chosen AS ({chosen}){cascade},"  # noqa: S608
            f" gone AS (DELETE FROM {table} WHERE {pk} IN (SELECT {pk} FROM chosen) RETURNING 1)"
            f" SELECT (SELECT count(*) FROM gone), (SELECT max({column}) FROM chosen)"
        ]
    rows = f"SELECT {pk} FROM ({chosen}) chosen"  # noqa: S608
    return [
        f"SELECT count(*), max({column}) FROM ({chosen}) chosen",  # noqa: S608
        *(f"DELETE FROM {child} WHERE {fk} IN ({rows})" for child, fk in children),  # noqa: S608
        f"DELETE FROM {table} WHERE {pk} IN ({rows})",  # noqa: S608
    ]


def _batch_purge(statements: list[str], params: list[Any]) -> tuple[int, Any]:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statements[0], params)
        deleted, newest = cursor.fetchone()
        for statement in statements[1:]:
            cursor.execute(statement, params)
    return int(deleted), newest


def rows_purge(
    retention: Retention,
    *,
    before: Any,
    batch_rows: int | None = None,
    budget_seconds: float | None = None,
) -> int:
    """Delete the rows of ``retention`` older than ``before``, ``batch_rows`` at a time, until
    a batch comes back short or ``budget_seconds`` have passed (the next run goes on from
    there); returns how many rows of the table went. At least one batch always runs."""
    batch_rows = batch_rows or settings.RETENTION_BATCH_ROWS
    budget = settings.RETENTION_RUN_SECONDS if budget_seconds is None else budget_seconds
    first, resumed = _statements(retention, resumed=False), _statements(retention, resumed=True)
    give_up = time.monotonic() + budget
    purged, newest = 0, None
    while True:
        if newest is None:
            deleted, newest = _batch_purge(first, [before, batch_rows])
        else:
            deleted, newest = _batch_purge(resumed, [before, newest, batch_rows])
        purged += deleted
        if deleted < batch_rows or time.monotonic() >= give_up:
            break
    if purged:
        logger.info(
            "purged %d rows of %s older than %s", purged, retention.model._meta.db_table, before
        )
    return purged
