"""Trade history: keyset pages of trades (newest first) and the refs of a lookup by id or
externalId."""

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

from django.db import connections

from core.db import ModelRows, replica_reads
from core.errors import validation_error
from merchants.models import Merchant
from trading.models import Trade, TradeItem

MAX_REFS = 100
# The whole path parameter of ``GET /secure/trades/{tradeId}``, as the document bounds it: 100
# refs of an externalId's 128 characters would not fit in a URL anyway.
MAX_REFS_LENGTH = 4000


# The last trade of a page: its creation in microseconds since 1970 and its id. Every string of
# this shape is a position (the document states the pattern), so no cursor that passes the query
# serializer fails here; opaque to clients all the same.
CURSOR_PATTERN = re.compile(r"\A[0-9]{1,17}_[0-9a-f]{32}\Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _encode_cursor(trade: Trade) -> str:
    return f"{(trade.created_at - _EPOCH) // _MICROSECOND}_{trade.id.hex}"


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    if not CURSOR_PATTERN.match(cursor):
        raise validation_error({"cursor": "Not a cursor this service gives."})
    micros, trade_id = cursor.split("_")
    return _EPOCH + int(micros) * _MICROSECOND, uuid.UUID(trade_id)


# The trades a page lists: field names and the value each of its trades has.
TradeFilter = dict[str, object]
_TRADES = ModelRows(Trade)
_ITEMS = ModelRows(TradeItem)
_TRADE_ID, _ITEM_ID = _TRADES.index("id"), _ITEMS.index("id")


@cache
def _page_sql(fields: tuple[str, ...], after_cursor: bool) -> str:
    """A page of trades (newest first) with their items, in one statement written out once per
    shape: compiling the two ORM queries cost more CPU than running them (bench/README.md)."""
    conditions = [f"t.{column} = %s" for column in _TRADES.quoted(list(fields))]
    if after_cursor:
        # A row comparison is one index range; the equivalent OR would filter every row above.
        conditions.append('(t."created_at", t."id") < (%s, %s)')
    return (
        f"SELECT {_TRADES.columns('p')}, {_ITEMS.columns('i')} FROM ("  # noqa: S608
        f"SELECT * FROM {_TRADES.table('t')} WHERE {' AND '.join(conditions)}"
        ' ORDER BY t."created_at" DESC, t."id" DESC LIMIT %s'
        f') p LEFT JOIN {_ITEMS.table("i")} ON i."trade_id" = p."id"'
        ' ORDER BY p."created_at" DESC, p."id" DESC, i."position"'
    )


@dataclass(frozen=True)
class TradePage:
    """Trades newest first, each with its items in position order, and where the next page
    starts (None: this is the last)."""

    trades: list[tuple[Trade, list[TradeItem]]]
    next_cursor: str | None


def trades_page(*, where: TradeFilter, cursor: str | None, limit: int) -> TradePage:
    fields = tuple(sorted(where))
    params = [_TRADES.param(name, where[name]) for name in fields]
    if cursor:
        created_at, trade_id = _decode_cursor(cursor)
        params += [_TRADES.param("created_at", created_at), _TRADES.param("id", trade_id)]
    # History may be a moment stale: a replica's, when there is one (a trade by id is read
    # from the primary, which has it as soon as it was created).
    with replica_reads() as alias, connections[alias].cursor() as db:
        db.execute(_page_sql(fields, bool(cursor)), [*params, limit + 1])
        rows = db.fetchall()
    # Records of the rows' values (named tuples with the models' attribute names), not model
    # instances: building 20 trades and their items cost more than the query.
    trade_record, item_record, width = _TRADES.recorder(), _ITEMS.recorder(), _TRADES.width
    page: list[Trade] = []
    items: dict[uuid.UUID, list[TradeItem]] = {}
    last = None  # the trade id of the row before, as the database gave it
    for row in rows:
        if row[_TRADE_ID] != last:
            last = row[_TRADE_ID]
            page.append(trade_record(row[:width]))
            items[page[-1].id] = []
        if row[width + _ITEM_ID] is not None:
            items[page[-1].id].append(item_record(row[width:]))
    more = len(page) > limit
    page = page[:limit]
    return TradePage(
        trades=[(trade, items[trade.id]) for trade in page],
        next_cursor=_encode_cursor(page[-1]) if more and page else None,
    )


def merchant_self_trades(*, merchant: Merchant, game: int, type: str | None) -> TradeFilter:
    where: TradeFilter = {"merchant": merchant.pk, "source": Trade.Source.SELF, "game": game}
    return {**where, "type": type} if type else where


def client_trades(
    *, merchant: Merchant, platform_id: str, game: int, type: str | None
) -> TradeFilter:
    """The page filter of ``client_trade_scope`` in one game."""
    where: TradeFilter = {
        "merchant": merchant.pk,
        "source": Trade.Source.CLIENT,
        "client_platform_id": platform_id,
        "game": game,
    }
    return {**where, "type": type} if type else where


def trade_refs_parse(*, raw: str) -> list[str]:
    """The refs of a ``tradeId`` path parameter (comma-separated), within the bounds the document
    gives it, or VALIDATION_FAILED: a parameter the document refuses is refused, not looked up."""
    if len(raw) > MAX_REFS_LENGTH:
        raise validation_error({"tradeId": f"At most {MAX_REFS_LENGTH} characters."})
    refs = [ref.strip() for ref in raw.split(",")]
    if len(refs) > MAX_REFS:
        raise validation_error({"tradeId": f"At most {MAX_REFS} refs."})
    return refs
