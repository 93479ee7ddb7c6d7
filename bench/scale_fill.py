"""A busy year's rows for bench/scale.py, by COPY (psycopg's ``cursor.copy``), never the ORM:
``trades`` trades (a tenth of them the busiest merchant's, the rest spread over 999 others) a
year back from now, each with one item and three events; as many wallet transfers of two
postings each (a crypto credit, then a trade's settlement: balanced pairs); half as many webhook
events, each with its delivery attempt, over the 91 days the outbox keeps (about 1 % past it);
a tenth as many idempotency keys over the last 25 hours (a twenty-fifth expired); the market's
listings (the sandbox's own seeding, ``listings`` of them).

The newest thousandth of the trades is in flight, with a few rows due for each sweep (holds
ended, autoCancel deadlines passed, offers expired, purchases and cancels lost, deposits whose
offer was not sent), as a sweep finds them between two runs. Rows are written in the order
they were made (ids rising with time); the tables' secondary indexes are dropped for the load
and built after it, and the load runs with
``session_replication_role = replica``: no foreign-key check and no posting trigger per row
(every transfer is balanced by construction; ``check_wallet``, timed after, proves it)."""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from decimal import Decimal
from operator import itemgetter
from typing import Any

from retention import AUTO_FIELDS, sql, timed

MERCHANTS = 1_000
BUSIEST_SHARE = 10  # one trade in ten is the busiest merchant's (merchant 0, the probe's)
YEAR = timedelta(days=365)
OUTBOX_DAYS = 91
IN_FLIGHT_SHARE = 1_000  # the newest trade in a thousand is in flight
PRICE = Decimal("10.50")
PLATFORM_BASE = 76561197960265728
CLIENTS = 100_000  # platform accounts the trades go to, in turn
PROBE_CLIENT = str(PLATFORM_BASE + 101)  # the busiest merchant's, a trade in 100,000
CHUNK_ROWS = 20_000

TABLES = (
    "trading_trade",
    "trading_tradeitem",
    "trading_tradeevent",
    "wallet_transfer",
    "wallet_posting",
    "merchants_webhookevent",
    "merchants_webhookdelivery",
    "merchants_idempotentrequest",
)


@contextmanager
def indexes_built_after(tables: tuple[str, ...]) -> Iterator[None]:
    """The tables' indexes dropped while they are filled and built again after (as
    bench/retention.py's), but those a constraint stands on: primary keys, unique pairs."""
    found = sql(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i"
        " WHERE i.indrelid = ANY(%s::regclass[])"
        " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)",
        [list(tables)],
    )
    # Sorts in memory rather than on disk: this session's own, the server keeps its setting.
    sql("SET maintenance_work_mem = '1GB'")
    try:
        for name, _ in found:
            sql(f"DROP INDEX {name}")
        yield
    finally:  # also when the fill fails: the next run finds the indexes to measure
        with timed(f"{len(found)} indexes built"):
            for _, definition in found:
                sql(definition.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ", 1))


def trade_id(g: int) -> str:
    """Trade g's id: rising with g, as the time-ordered ids of a busy table would be laid out."""
    return f"00000000-0000-4000-8000-{g:012x}"


def merchant_of(g: int) -> int:
    return 0 if g % BUSIEST_SHARE == 0 else 1 + g % (MERCHANTS - 1)


def client_of(g: int) -> str:
    return str(PLATFORM_BASE + 1 + g % CLIENTS)


def external_id(g: int) -> str:
    return f"order-{g}"


def in_flight_from(trades: int) -> int:
    """The first trade number still in flight."""
    return trades - max(trades // IN_FLIGHT_SHARE, 50) + 1


# A trade in flight, by g: (type, trade status, item status); withdrawals pass through pending,
# active and hold, deposits wait for their offer (initiated, pending) or its answer (active).
LIVE = (
    ("withdraw", "pending", "pending"),
    ("withdraw", "active", "active"),
    ("withdraw", "hold", "hold"),
    ("deposit", "initiated", "initiated"),
    ("deposit", "pending", "pending"),
    ("deposit", "active", "active"),
)


def _stamp(moment: datetime) -> str:
    return moment.isoformat()


def _copy(table: str, columns: list[str], rows: Iterator[str]) -> int:
    """``rows`` (COPY text lines, no newline) into ``table`` in chunks; how many."""
    from django.db import connection

    count = 0
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        chunk: list[str] = []
        for row in rows:
            chunk.append(row)
            if len(chunk) == CHUNK_ROWS:
                copy.write("\n".join(chunk) + "\n")
                count += len(chunk)
                chunk = []
        if chunk:
            copy.write("\n".join(chunk) + "\n")
            count += len(chunk)
    return count


def _template(model: Any, varying: list[str]) -> tuple[list[str], str, Callable[[Any], Any]]:
    """The table's columns, a COPY line with a ``%s`` for each varying field and every other
    field's default rendered once, and what puts a row given in ``varying``'s order into the
    table's."""
    from django.db import connection

    columns, parts = [], []
    for field in model._meta.concrete_fields:
        if field.name not in varying and field.get_internal_type() in AUTO_FIELDS:
            continue  # the sequence numbers it
        columns.append(connection.ops.quote_name(field.column))
        parts.append((field.name, _default_text(field)))
    named = [name for name, _ in parts if name in varying]
    if len(named) != len(varying):
        raise ValueError(f"{model.__name__} has no {set(varying) - set(named)}")
    line = "\t".join("%s" if name in varying else text.replace("%", "%%") for name, text in parts)
    return columns, line, itemgetter(*(varying.index(name) for name in named))


def _default_text(field: Any) -> str:
    import json

    if not field.has_default():
        return "\\N" if field.null else ""
    value = field.get_default()
    if value is None:
        return "\\N"
    if field.get_internal_type() == "JSONField":
        return json.dumps(value)
    if isinstance(value, bool):
        return "t" if value else "f"
    return str(value)


def _rows(
    line: str, order: Callable[[Any], Any], values: Iterator[tuple[Any, ...]]
) -> Iterator[str]:
    for row in values:
        yield line % order(row)


def _copy_rows(model: Any, fields: list[str], rows: Iterator[tuple[Any, ...]]) -> None:
    """``rows`` (``fields``' values in that order) into the model's table."""
    columns, line, order = _template(model, fields)
    started = time.perf_counter()
    count = _copy(model._meta.db_table, columns, _rows(line, order, rows))
    print(f"    {model._meta.db_table}: {count:,} rows in {time.perf_counter() - started:.1f} s")


def fill(*, trades: int, merchants: list[str], accounts: dict[str, int]) -> dict[int, Decimal]:
    """Every table's rows for ``trades`` trades; returns each wallet account's sum of postings
    (its balance to be)."""
    from django.db import connection

    now = datetime.now().astimezone()
    sums: dict[int, Decimal] = {}
    with indexes_built_after(TABLES):
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = replica")
        try:
            with timed(f"{trades:,} trades, their items and events"):
                _trades(trades, merchants, now)
            with timed(f"{trades:,} transfers, {2 * trades:,} postings"):
                sums = _postings(trades, merchants, accounts, now)
            with timed(f"{trades // 2:,} webhook events and their deliveries"):
                _webhooks(trades // 2, merchants, now)
            with timed(f"{trades // 10:,} idempotency keys"):
                _idempotency(trades // 10, merchants, now)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET session_replication_role = DEFAULT")
    return sums


def _when(g: int, trades: int, now: datetime) -> datetime:
    return now - YEAR * ((trades - g) / trades)


def _trades(trades: int, merchants: list[str], now: datetime) -> None:
    from trading.models import Trade, TradeEvent, TradeItem

    live_from = in_flight_from(trades)
    trade_fields = [
        "id", "merchant", "type", "source", "status", "game", "external_id",
        "client_platform_id", "client_trade_url", "total_price", "created_at", "updated_at",
        "hold_end_date", "auto_cancel_at", "offer_expires_at", "bot_info",
    ]  # fmt: skip
    item_fields = [
        "trade", "position", "public_id", "status", "appid", "price", "sourcing_price",
        "delivery", "details", "purchase_ref", "hold_end_date", "cancel_requested_at",
        "updated_at", "asset_owner",
    ]  # fmt: skip
    event_fields = ["trade", "kind", "from_status", "to_status", "actor", "detail", "created_at"]
    hour, day = timedelta(hours=1), timedelta(days=1)

    def shape(g: int) -> tuple[str, str, str, datetime, dict[str, Any]]:
        """(type, status, item status, made, the times a trade in flight has) of trade g."""
        made = _when(g, trades, now)
        if g < live_from:
            return ("withdraw" if g % 5 else "deposit"), "completed", "completed", made, {}
        kind, status, item_status = LIVE[g % len(LIVE)]
        times: dict[str, Any] = {}
        if status == "hold":  # one in seven ended, the sweep's due
            times["hold"] = now - hour if g % 7 == 0 else now + 8 * day
        if kind == "withdraw":  # one in five past its autoCancel deadline
            times["cancel_at"] = now - hour if g % 5 == 0 else now + day
        if kind == "deposit" and status == "active":  # one in three left unanswered
            times["expires"] = now - hour if (g // len(LIVE)) % 3 == 0 else now + hour
        # Deposits waiting for their offer moved just now, but one in eleven stuck.
        times["moved"] = made if kind == "withdraw" or g % 11 == 0 else now
        return kind, status, item_status, made, times

    def trade_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, trades + 1):
            kind, status, _, made, times = shape(g)
            yield (
                trade_id(g), merchants[merchant_of(g)], kind, "self", status, 730,
                external_id(g), client_of(g),
                f"https://steamcommunity.com/tradeoffer/new/?partner={1 + g % CLIENTS}&token=Ab3",
                PRICE, _stamp(made), _stamp(times.get("moved", made)),
                _stamp(times["hold"]) if "hold" in times else "\\N",
                _stamp(times["cancel_at"]) if "cancel_at" in times else "\\N",
                _stamp(times["expires"]) if "expires" in times else "\\N", "\\N",
            )  # fmt: skip

    def item_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, trades + 1):
            kind, _, item_status, made, times = shape(g)
            # A pending withdrawal's purchase is recorded, but one in nine's task was lost;
            # one in thirteen asked to cancel long ago, its completion lost too.
            lost = item_status == "pending" and kind == "withdraw" and g % 9 == 0
            asked = item_status in ("pending", "active") and g % 13 == 0
            yield (
                trade_id(g), 0, f"730_{g}", item_status, 730, PRICE, Decimal("10.00"),
                "standard", '{"name": "AK-47 | Redline"}', "" if lost else f"purchase-{g}",
                _stamp(times["hold"]) if "hold" in times else "\\N",
                _stamp(now - hour) if asked else "\\N", _stamp(made),
                # A deposit's item is the depositor's asset (check_wallet asks).
                client_of(g) if kind == "deposit" else "",
            )  # fmt: skip

    moves = (("initiated", "pending"), ("pending", "active"), ("active", "completed"))

    def event_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, trades + 1):
            _, status, _, made, _ = shape(g)
            for n, (was, to) in enumerate(moves):
                if status != "completed" and n == 2:
                    break
                moment = made + timedelta(minutes=n)
                yield trade_id(g), "moved", was, to, "system", "{}", _stamp(moment)

    for model, fields, rows in (
        (Trade, trade_fields, trade_rows()),
        (TradeItem, item_fields, item_rows()),
        (TradeEvent, event_fields, event_rows()),
    ):
        _copy_rows(model, fields, rows)


def _postings(
    trades: int, merchants: list[str], accounts: dict[str, int], now: datetime
) -> dict[int, Decimal]:
    """A transfer per trade: even ones credit the merchant from the outside world (crypto),
    odd ones settle a trade (the merchant's available balance to the supplier payables)."""
    from wallet.models import Posting, Transfer

    world, supplier = accounts["world"], accounts["supplier"]
    sums: dict[int, Decimal] = {}

    def transfer_id(g: int) -> str:
        return f"00000000-0000-4000-9000-{g:012x}"

    def transfer_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, trades + 1):
            made = _stamp(_when(g, trades, now))
            if g % 2:
                yield transfer_id(g), "trade_settle", "trade", trade_id(g), made
            else:
                yield transfer_id(g), "crypto_credit", "crypto_deposit", f"deposit-{g}", made

    def posting_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, trades + 1):
            mine = accounts[merchants[merchant_of(g)]]
            source, target = (mine, supplier) if g % 2 else (world, mine)
            for account, amount in ((source, -PRICE), (target, PRICE)):
                sums[account] = sums.get(account, Decimal(0)) + amount
                yield amount, account, transfer_id(g)

    for model, fields, rows in (
        (Transfer, ["id", "kind", "cause_type", "cause_id", "created_at"], transfer_rows()),
        (Posting, ["amount", "account", "transfer"], posting_rows()),
    ):
        _copy_rows(model, fields, rows)
    return sums


def _webhooks(events: int, merchants: list[str], now: datetime) -> None:
    """One in 500 pending (half of them due now, half retrying later), one in 200 failed."""
    from merchants.webhooks.models import WebhookDelivery, WebhookEvent

    span = timedelta(days=OUTBOX_DAYS)
    payload = (
        '{"id": "%s", "type": "trade.completed", "data": {"status": "completed",'
        ' "totalPrice": "10.50", "externalId": "order-%d"}}'
    )

    def event_id(g: int) -> str:
        return f"00000000-0000-4000-a000-{g:012x}"

    def status(g: int) -> str:
        return "pending" if g % 500 == 0 else "failed" if g % 200 == 0 else "delivered"

    def event_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, events + 1):
            made = now - span * ((events - g) / max(events, 1))
            state = status(g)
            due = now - timedelta(minutes=1) if g % 1000 == 0 else now + timedelta(minutes=5)
            yield (
                event_id(g), merchants[merchant_of(g)], "trade.completed", "trade", trade_id(g), 3,
                payload % (event_id(g), g), state, 0 if state == "pending" else 1,
                _stamp(due) if state == "pending" else "\\N", _stamp(made),
                _stamp(made) if state == "delivered" else "\\N",
            )  # fmt: skip

    def delivery_rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, events + 1):
            if status(g) == "pending":
                continue
            made = _stamp(now - span * ((events - g) / max(events, 1)))
            code = 200 if status(g) == "delivered" else 503
            yield event_id(g), 1, "https://merchant.example/hooks", code, 41, made

    event_fields = [
        "id", "merchant", "type", "subject_type", "subject_id", "sequence", "payload", "status",
        "attempts", "next_attempt_at", "created_at", "delivered_at",
    ]  # fmt: skip
    delivery_fields = ["event", "attempt", "url", "status_code", "latency_ms", "created_at"]
    for model, fields, rows in (
        (WebhookEvent, event_fields, event_rows()),
        (WebhookDelivery, delivery_fields, delivery_rows()),
    ):
        _copy_rows(model, fields, rows)


def _idempotency(keys: int, merchants: list[str], now: datetime) -> None:
    from merchants.models import IdempotentRequest

    span = timedelta(hours=25)

    def rows() -> Iterator[tuple[Any, ...]]:
        for g in range(1, keys + 1):
            made = now - span * ((keys - g) / max(keys, 1))
            yield (
                merchants[merchant_of(g)], "merchant", f"key-{g}", f"{g:064x}",
                f"00000000-0000-4000-b000-{g:012x}", f"req-{g}", 200, _stamp(made),
                _stamp(made + timedelta(hours=24)),
            )  # fmt: skip

    fields = [
        "merchant", "caller", "key", "fingerprint", "claim", "request_id", "status_code",
        "created_at", "expires_at",
    ]  # fmt: skip
    _copy_rows(IdempotentRequest, fields, rows())


def emptied() -> None:
    """The tables the fill writes (and what hangs off them), empty; balances back to zero."""
    sql(f"TRUNCATE {', '.join(TABLES)}, trading_botdelivery CASCADE")
    sql("UPDATE wallet_account SET balance = 0")
