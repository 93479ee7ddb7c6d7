"""The statements the periodic sweeps send and how PostgreSQL plans them, for the sweeps' plan
test and bench/scale.py. A sweep builds its query inline, in its service, so its own statement
is caught as the sweep sends it (never rebuilt here, where it could drift from the sweep's),
and the sweep is stopped there, before it changes anything."""

import json
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

Statement = tuple[str, Any]  # SQL as the cursor gets it, and its parameters


class _CaughtError(Exception):
    """Ends a sweep at the statement looked for."""


def sweep_statements(
    run: Callable[[], object], *, table: str, every: bool = False
) -> list[Statement]:
    """The SELECTs (a purge's: its WITH) ``run`` sends that read ``table``: the first, the sweep
    stopped before it runs (``every``: each of them, run, for selectors that only read)."""
    caught: list[Statement] = []
    quoted = connection.ops.quote_name(table)

    def catch(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if sql.lstrip().upper().startswith(("SELECT", "WITH")) and quoted in sql:
            caught.append((sql, params))
            if not every:
                raise _CaughtError
        return execute(sql, params, many, context)

    with connection.execute_wrapper(catch), suppress(_CaughtError):
        run()
    if not caught:
        raise AssertionError(f"{run.__name__} sent no statement reading {table}")
    return caught


def plan_of(statement: Statement, *, analyze: bool = False) -> dict[str, Any]:
    """EXPLAIN's answer (FORMAT JSON) for the statement; analysed, it runs in a transaction
    rolled back (a purge's batch deletes)."""
    sql, params = statement
    options = "ANALYZE, BUFFERS, FORMAT JSON" if analyze else "FORMAT JSON"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN ({options}) {sql}", params)
        (found,) = cursor.fetchone()
        transaction.set_rollback(True)
    explained: dict[str, Any] = (json.loads(found) if isinstance(found, str) else found)[0]
    return explained


@dataclass(frozen=True)
class Read:
    """One read of a table in a plan: how, through which indexes, and (analysed) how many rows
    it looked at, those its filters dropped included."""

    how: str
    table: str
    indexes: frozenset[str]
    examined: int


def _indexes_under(node: dict[str, Any]) -> set[str]:
    found = {node["Index Name"]} if "Index Name" in node else set()
    for child in node.get("Plans", []):
        found |= _indexes_under(child)
    return found


def reads(node: dict[str, Any]) -> Iterator[Read]:
    """Each read of a table in the plan under ``node``; a bitmap heap scan reads through the
    bitmap index scans under it, a sequential scan through none."""
    how = node["Node Type"]
    if "Relation Name" in node and how.endswith("Scan"):  # not a purge's Delete
        if how == "Bitmap Heap Scan":
            indexes = _indexes_under(node)
        else:
            indexes = {node["Index Name"]} if "Index Name" in node else set()
        # EXPLAIN gives the rows and the filtered-out rows of one loop, on average.
        per_loop = sum(
            node.get(key, 0)
            for key in ("Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck")
        )
        examined = round(per_loop * node.get("Actual Loops", 1))
        yield Read(how, node["Relation Name"], frozenset(indexes), examined)
    for child in node.get("Plans", []):
        yield from reads(child)


def selection(plan: dict[str, Any]) -> dict[str, Any]:
    """The part of a plan that chooses the rows: a purge's batch (core.retention) chooses them
    in its CTE ``chosen`` and then deletes them by primary key, a join PostgreSQL may make by
    hash over a small table; any other statement is all selection."""
    chosen = (p for p in plan.get("Plans", []) if p.get("Subplan Name") == "CTE chosen")
    return next(chosen, plan)
