"""Query and body parsing of the inventory and trade-URL check endpoints: the inventory queries
hand the view the selector's input (``trading.accounts.selectors.inventory``)."""

from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from core.api.serializers import (
    QueryIntegerField,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
)
from merchants.tradeurls import TradeUrlValidator
from trading.accounts.selectors.inventory import InventoryQuery, TradeUrlInventory
from trading.marketplace.base import MarketSort
from trading.trades.inputs import TrueFalseField, game_query_field, page_field, usd_field


class InventoryLimitField(QueryIntegerField):
    """1 to 1000 items a page, or -1 for all of them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=-1, max_value=1000, **kwargs)

    def accepted_ranges(self) -> tuple[tuple[int, int], ...]:
        return ((-1, -1), (1, 1000))

    def to_internal_value(self, data: Any) -> int:
        value = super().to_internal_value(data)
        if value == 0:
            raise serializers.ValidationError("Use -1 for no pagination, or 1 to 1000.")
        return value


class InventoryQueryIn(serializers.Serializer):
    game = game_query_field()
    # DRF hands a default back as it is (never through to_internal_value): a bool, not "false".
    refresh = TrueFalseField(default=False, help_text="bypass the cache")
    acceptedOnly = TrueFalseField(default=False)
    search = StrictCharField(max_length=100, required=False, default="", allow_blank=True)
    # Any value that is not one of the five sorts is ignored (4.13).
    sort = StrictCharField(
        max_length=100,
        required=False,
        default="",
        allow_blank=True,
        help_text="relevance, priceAsc, priceDesc, nameAsc or nameDesc; others are ignored",
    )
    minPrice = usd_field()
    maxPrice = usd_field()
    page = page_field()
    limit = InventoryLimitField(default=50, help_text="-1 disables pagination")

    def validate_sort(self, value: str) -> MarketSort | None:
        """Unknown sorts are ignored, as the contract says."""
        return MarketSort(value) if value in MarketSort._value2member_map_ else None

    def run_validation(self, data: Any = empty) -> InventoryQuery:
        return inventory_query(super().run_validation(data))


class SecureInventoryQueryIn(InventoryQueryIn):
    tradeUrl = StrictCharField(
        max_length=200, validators=[TradeUrlValidator()], help_text="the owner's trade URL"
    )

    def run_validation(self, data: Any = empty) -> TradeUrlInventory:  # type: ignore[override]
        query = serializers.Serializer.run_validation(self, data)
        return TradeUrlInventory(trade_url=query["tradeUrl"], query=inventory_query(query))


def inventory_query(query: dict[str, Any]) -> InventoryQuery:
    return InventoryQuery(
        game=int(query["game"]),
        refresh=query["refresh"],
        accepted_only=query["acceptedOnly"],
        search=query["search"],
        sort=query["sort"],
        min_price=query.get("minPrice"),
        max_price=query.get("maxPrice"),
        page=query["page"],
        limit=query["limit"],
    )


class CheckTradeUrlIn(StrictSerializer):
    tradeurl = StrictCharField(max_length=200, validators=[TradeUrlValidator()])
    forceRefresh = StrictBooleanField(required=False, default=False)
