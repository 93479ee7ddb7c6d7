"""Trade history: keyset pages (newest first) and lookups by id or externalId."""

import base64
import uuid
from datetime import datetime

from django.db import connection, models
from django.db.models import Prefetch, Q, QuerySet, Sum

from core.errors import validation_error
from merchants.models import Merchant
from trading.models import Status, Trade, TradeItem
from trading.representations import TradePageOut, trade_json
from wallet.selectors import LockHolding

MAX_REFS = 100


def _encode_cursor(trade: Trade) -> str:
    raw = f"{trade.created_at.isoformat()}|{trade.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        moment, trade_id = raw.split("|")
        return datetime.fromisoformat(moment), uuid.UUID(trade_id)
    except (ValueError, UnicodeDecodeError) as exc:
        raise validation_error({"cursor": "Not a cursor this service gave."}) from exc


def _column_value(name: str, value: object) -> object:
    field = Trade._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field.get_db_prep_value(value, connection)


def _with_items(rows: QuerySet[Trade]) -> QuerySet[Trade]:
    return rows.select_related("merchant").prefetch_related(
        Prefetch("items", queryset=TradeItem.objects.order_by("position"))
    )


def _items_of(trades: list[Trade]) -> dict[uuid.UUID, list[TradeItem]]:
    """The items of a page of trades in one query: Django's prefetch machinery cost a page more
    CPU than the two queries themselves (profiled in bench/README.md)."""
    items: dict[uuid.UUID, list[TradeItem]] = {trade.id: [] for trade in trades}
    for item in TradeItem.objects.filter(trade_id__in=list(items)).order_by("position"):
        items[item.trade_id].append(item)
    return items


def trades_page(*, rows: QuerySet[Trade], cursor: str | None, limit: int) -> TradePageOut:
    if cursor:
        created_at, trade_id = _decode_cursor(cursor)
        # A row comparison is one index range; the equivalent OR would filter every row above.
        # Its values go in as the columns store them (SQLite keeps a uuid as 32 hex digits).
        rows = rows.extra(
            where=['("trading_trade"."created_at", "trading_trade"."id") < (%s, %s)'],
            params=[_column_value("created_at", created_at), _column_value("id", trade_id)],
        )
    page = list(rows.order_by("-created_at", "-id")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    items = _items_of(page)
    return {
        "items": [trade_json(trade, items[trade.id]) for trade in page],
        "nextCursor": _encode_cursor(page[-1]) if more and page else None,
    }


def merchant_self_trades(*, merchant: Merchant, game: int, type: str | None) -> QuerySet[Trade]:
    rows = Trade.objects.filter(merchant=merchant, source=Trade.Source.SELF, game=game)
    return rows.filter(type=type) if type else rows


def client_trade_scope(*, merchant: Merchant, platform_id: str) -> QuerySet[Trade]:
    """A client sees its own trades with this merchant, nothing else."""
    return Trade.objects.filter(
        merchant=merchant, source=Trade.Source.CLIENT, client_platform_id=platform_id
    )


def client_trades(
    *, merchant: Merchant, platform_id: str, game: int, type: str | None
) -> QuerySet[Trade]:
    rows = client_trade_scope(merchant=merchant, platform_id=platform_id).filter(game=game)
    return rows.filter(type=type) if type else rows


def _ref_filter(refs: list[str]) -> Q:
    ids = []
    for ref in refs:
        try:
            ids.append(uuid.UUID(ref))
        except ValueError:
            continue
    return Q(id__in=ids) | Q(external_id__in=[ref for ref in refs if ref])


def trades_by_refs(*, scope: QuerySet[Trade], refs: list[str]) -> list[Trade]:
    """Trades of ``scope`` whose id or externalId is among ``refs``, in the order asked."""
    if len(refs) > MAX_REFS:
        raise validation_error({"tradeId": f"At most {MAX_REFS} refs."})
    found = list(_with_items(scope.filter(_ref_filter(refs))))
    order: dict[str, int] = {}
    for n, ref in enumerate(refs):
        order.setdefault(ref, n)  # a ref asked twice keeps its first place
    return sorted(
        found,
        key=lambda t: min(order.get(str(t.id), MAX_REFS), order.get(t.external_id, MAX_REFS)),
    )


def trade_get(*, scope: QuerySet[Trade], ref: str) -> Trade | None:
    matches = trades_by_refs(scope=scope, refs=[ref])
    return matches[0] if matches else None


def withdrawal_locks() -> LockHolding:
    """What withdrawal items keep locked; ended items must keep nothing."""
    held = (
        TradeItem.objects.filter(trade__type=Trade.Type.WITHDRAW, locked__gt=0)
        .values("trade__merchant_id")
        .annotate(total=Sum("locked"))
    )
    stale = TradeItem.objects.filter(
        trade__type=Trade.Type.WITHDRAW,
        locked__gt=0,
        status__in=[
            Status.COMPLETED,
            Status.FAILED,
            Status.CANCELED,
            Status.DECLINED,
            Status.REVERTED,
        ],
    ).values_list("trade_id", "public_id", "status", "locked")[:100]
    return LockHolding(
        by_merchant={str(row["trade__merchant_id"]): row["total"] for row in held},
        stale=[f"trade {t} item {i} is {s} but holds {amount}" for t, i, s, amount in stale],
    )
