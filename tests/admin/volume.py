"""Rows by the million for the console's plans and benchmark: one ``INSERT ... SELECT`` over
``generate_series(1, count)`` per table, PostgreSQL making every row (the ORM would take hours
for ten million). Each column is the SQL expression given for it (``n`` is the row's number),
else its field's default; a column with neither is an error, not a guess."""

from decimal import Decimal
from typing import Any

from django.db import connection, models
from django.db.models.fields import NOT_PROVIDED

from trading.models import IN_FLIGHT


def _default(field: "models.Field[Any, Any]") -> str:
    if field.has_default() and field.default is not NOT_PROVIDED:
        value = field.get_default()
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | Decimal):
            return str(value)
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        if isinstance(value, dict | list) and not value:
            return "'{}'::jsonb" if isinstance(value, dict) else "'[]'::jsonb"
    if field.null:
        return "NULL"
    if field.blank and field.empty_strings_allowed:
        return "''"
    raise ValueError(f"{field.model.__name__}.{field.name}: give an expression")


def rows_fill(model: type[models.Model], count: int, **columns: str) -> int:
    """Insert ``count`` rows of ``model``: ``columns`` maps a field's name to its SQL."""
    names, values = [], []
    for field in model._meta.concrete_fields:
        names.append(connection.ops.quote_name(field.column))
        if field.name in columns:
            values.append(columns.pop(field.name))
        elif field.primary_key and isinstance(field, models.UUIDField):
            values.append("gen_random_uuid()")
        elif field.primary_key and isinstance(field, models.AutoField | models.BigAutoField):
            names.pop()
        else:
            values.append(_default(field))
    if columns:
        raise ValueError(f"no such fields: {', '.join(columns)}")
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(names)})"
            f" SELECT {', '.join(values)} FROM generate_series(1, %s) AS n",
            [count],
        )
        inserted: int = cursor.rowcount
    return inserted


def cycle(values: tuple[str, ...] | list[str]) -> str:
    """SQL taking row ``n``'s value in turn from ``values``."""
    quoted = ", ".join("'" + value + "'" for value in values)
    return f"(ARRAY[{quoted}])[1 + mod(n, {len(values)})]"


def trade_columns(
    *, merchant_id: str, in_flight: int, stuck_every: int = 0, now: str = "now()"
) -> dict[str, str]:
    """Trades a second apart back from ``now``, half withdrawals, half deposits: the newest
    ``in_flight`` still in flight (each state in turn; a hold ending eight days after its start),
    and one in ``stuck_every`` of the older ones (none if 0), left in flight long ago; every
    other one completed."""
    states = cycle([str(status) for status in IN_FLIGHT])
    stuck = f" OR mod(n, {stuck_every}) = 0" if stuck_every else ""
    status = f"CASE WHEN n <= {in_flight}{stuck} THEN {states} ELSE 'completed' END"
    created = f"({now} - n * interval '1 second')"
    return {
        "merchant": f"'{merchant_id}'",
        "type": cycle(["withdraw", "deposit"]),
        "source": "'self'",
        "status": status,
        "game": "730",
        "client_platform_id": "'76561197960265729'",
        "client_trade_url": "''",
        "total_price": "10.50",
        "hold_end_date": f"CASE WHEN {status} = 'hold' THEN {created} + interval '8 days' END",
        "created_at": created,
        "updated_at": created,
    }
