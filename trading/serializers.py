"""Query and body parsing for the catalog, market, inventory and trade URL endpoints."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from config.api.serializers import (
    AnyOfRequired,
    QueryDecimalField,
    QueryIntegerField,
    RuledSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from merchants.tradeurls import TradeUrlValidator
from trading.games import PHASES
from trading.marketplace.base import MarketSort
from trading.trades.inputs import MAX_ITEM_PRICE
from trading.trades.inputs import external_id_field as _external_id
from trading.trades.inputs import game_body_field as _game_body
from trading.trades.inputs import game_query_field as _game

MAX_USD = Decimal(100_000_000)


def _usd(help_text: str | None = None) -> QueryDecimalField:
    return QueryDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=MAX_USD,
        required=False,
        help_text=help_text,
    )


def _page() -> QueryIntegerField:
    return QueryIntegerField(min_value=1, max_value=1_000_000, default=1)


class TrueFalseField(serializers.ChoiceField):
    """Exactly ``true`` or ``false`` in a query string."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=["true", "false"], **kwargs)

    def to_internal_value(self, data: Any) -> bool:  # type: ignore[override]
        return bool(super().to_internal_value(data) == "true")

    def to_representation(self, value: Any) -> str:
        """``true`` or ``false``, as the query string has it (the OpenAPI shows the default)."""
        return "true" if value else "false"


class PricesQuery(serializers.Serializer):
    game = QueryIntegerField(
        min_value=1,
        max_value=2**31 - 1,
        default=730,
        help_text="a positive game id; one the service does not trade has an empty price book",
    )


# A low bound above the high one (minPrice > maxPrice, floatMin > floatMax) is an empty range:
# an empty page, not a refusal (the document cannot compare two parameters).
class MarketQueryIn(serializers.Serializer):
    game = _game()
    search = StrictCharField(
        max_length=100,
        required=False,
        default="",
        allow_blank=True,
        help_text="case-insensitive substring",
    )
    sort = serializers.ChoiceField(
        choices=[s.value for s in MarketSort], default=MarketSort.RELEVANCE.value
    )
    minPrice = _usd("fee-inclusive USD")
    maxPrice = _usd("fee-inclusive USD")
    page = _page()
    perPage = QueryIntegerField(min_value=1, max_value=1000, default=50)


class MarketItemQueryIn(RuledSerializer):
    itemId = StrictCharField(
        min_length=5,
        max_length=256,
        required=False,
        help_text="catalog item id; wins over marketHashName (one of the two is required)",
    )
    marketHashName = StrictCharField(max_length=200, required=False, help_text="exact name")
    delivery = serializers.ChoiceField(choices=["any", "standard", "instant"], default="any")
    phase = serializers.ChoiceField(choices=list(PHASES), required=False)
    floatMin = QueryDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(1),
        required=False,
    )
    floatMax = QueryDecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(1),
        required=False,
    )
    page = _page()
    perPage = QueryIntegerField(min_value=1, max_value=100, default=50)

    rules = (AnyOfRequired(("itemId", "marketHashName")),)


class SuggestionsQueryIn(serializers.Serializer):
    q = StrictCharField(min_length=1, max_length=100)
    game = _game()


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
    game = _game()
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
    minPrice = _usd()
    maxPrice = _usd()
    page = _page()
    limit = InventoryLimitField(default=50, help_text="-1 disables pagination")

    def validate_sort(self, value: str) -> MarketSort | None:
        """Unknown sorts are ignored, as the contract says."""
        return MarketSort(value) if value in MarketSort._value2member_map_ else None


class SecureInventoryQueryIn(InventoryQueryIn):
    tradeUrl = StrictCharField(
        max_length=200, validators=[TradeUrlValidator()], help_text="the owner's trade URL"
    )


class CheckTradeUrlIn(StrictSerializer):
    tradeurl = StrictCharField(max_length=200, validators=[TradeUrlValidator()])
    forceRefresh = StrictBooleanField(required=False, default=False)


class DepositItemIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256)
    price = StrictDecimalField(
        max_digits=None, decimal_places=None, min_value=Decimal(0), max_value=MAX_ITEM_PRICE
    )
    amount = StrictIntegerField(min_value=1, max_value=10_000, required=False, default=1)


class ClientDepositIn(StrictSerializer):
    items = DepositItemIn(many=True)
    game = _game_body()
    externalId = _external_id()
    isInstant = StrictBooleanField(required=False, default=False)


class SecureSellIn(ClientDepositIn):
    tradeUrl = StrictCharField(max_length=300)
