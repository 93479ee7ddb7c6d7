"""Reads of trades every flow shares: trades by id or externalId within a scope, a client's own
trades, the trades in flight."""

import uuid

from django.db.models import Count, Prefetch, Q, QuerySet

from merchants.models import Merchant
from trading.models import IN_FLIGHT, Trade, TradeItem


def _with_items(rows: QuerySet[Trade]) -> QuerySet[Trade]:
    return rows.select_related("merchant").prefetch_related(
        Prefetch("items", queryset=TradeItem.objects.order_by("position"))
    )


def client_trade_scope(*, merchant: Merchant, platform_id: str) -> QuerySet[Trade]:
    """A client sees its own trades with this merchant, nothing else."""
    return Trade.objects.filter(
        merchant=merchant, source=Trade.Source.CLIENT, client_platform_id=platform_id
    )


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
    found = list(_with_items(scope.filter(_ref_filter(refs))))
    order: dict[str, int] = {}
    for n, ref in enumerate(refs):
        order.setdefault(ref, n)  # a ref asked twice keeps its first place
    last = len(refs)  # a trade is found by one ref at least; the other may match none
    return sorted(
        found,
        key=lambda t: min(order.get(str(t.id), last), order.get(t.external_id, last)),
    )


def trade_get(*, scope: QuerySet[Trade], ref: str) -> Trade | None:
    matches = trades_by_refs(scope=scope, refs=[ref])
    return matches[0] if matches else None


def trades_in_flight_counts() -> dict[tuple[str, str], int]:
    """Trades not yet finished, per (type, status), every pair present (0 when none). An
    index-only count over ``trade_in_flight_since`` (a partial index of those trades only), so its
    cost follows the trades in flight, not the history."""
    counts: dict[tuple[str, str], int] = {
        (kind, str(status)): 0 for kind in Trade.Type.values for status in IN_FLIGHT
    }
    rows = (
        Trade.objects.filter(status__in=IN_FLIGHT)
        .values_list("type", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for kind, status, n in rows:
        counts[(kind, status)] = n
    return counts
