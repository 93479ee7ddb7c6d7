"""Query and body parsing for the catalog, market, inventory and trade URL endpoints."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from config.api.serializers import (
    GameField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from merchants.tradeurls import trade_url_platform_id
from trading.games import CS_GAME, GAMES, PHASES
from trading.marketplace.base import MarketSort

GAME_CHOICES = [str(game) for game in GAMES]
MAX_USD = Decimal(100_000_000)
MAX_ITEM_PRICE = Decimal(100_000)


def _game(required: bool = False) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=GAME_CHOICES, default="730", required=required)


def _usd(help_text: str | None = None) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=14,
        decimal_places=2,
        min_value=Decimal(0),
        max_value=MAX_USD,
        required=False,
        allow_null=True,
        help_text=help_text,
    )


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
    game = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=730)


class MarketQueryIn(serializers.Serializer):
    game = _game()
    search = serializers.CharField(
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
    page = serializers.IntegerField(min_value=1, max_value=1_000_000, default=1)
    perPage = serializers.IntegerField(min_value=1, max_value=1000, default=50)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        low, high = attrs.get("minPrice"), attrs.get("maxPrice")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"minPrice": "Must not be above maxPrice."})
        return attrs


class MarketItemQueryIn(serializers.Serializer):
    itemId = serializers.CharField(
        min_length=5,
        max_length=256,
        required=False,
        help_text="catalog item id; wins over marketHashName",
    )
    marketHashName = serializers.CharField(max_length=200, required=False, help_text="exact name")
    delivery = serializers.ChoiceField(choices=["any", "standard", "instant"], default="any")
    phase = serializers.ChoiceField(choices=list(PHASES), required=False)
    floatMin = serializers.DecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(1),
        required=False,
    )
    floatMax = serializers.DecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=Decimal(1),
        required=False,
    )
    page = serializers.IntegerField(min_value=1, max_value=1_000_000, default=1)
    perPage = serializers.IntegerField(min_value=1, max_value=100, default=50)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("itemId") and not attrs.get("marketHashName"):
            raise serializers.ValidationError({"itemId": "Give itemId or marketHashName."})
        low, high = attrs.get("floatMin"), attrs.get("floatMax")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"floatMin": "Must not be above floatMax."})
        return attrs


class SuggestionsQueryIn(serializers.Serializer):
    q = serializers.CharField(min_length=1, max_length=100)
    game = _game()


class InventoryQueryIn(serializers.Serializer):
    game = _game()
    # DRF hands a default back as it is (never through to_internal_value): a bool, not "false".
    refresh = TrueFalseField(default=False, help_text="bypass the cache")
    acceptedOnly = TrueFalseField(default=False)
    search = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
    # Any value, empty or long ones too, that is not one of the five sorts is ignored (4.13).
    sort = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        help_text="relevance, priceAsc, priceDesc, nameAsc or nameDesc; others are ignored",
    )
    minPrice = _usd()
    maxPrice = _usd()
    page = serializers.IntegerField(min_value=1, max_value=1_000_000, default=1)
    limit = serializers.IntegerField(
        min_value=-1, max_value=1000, default=50, help_text="-1 disables pagination"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        low, high = attrs.get("minPrice"), attrs.get("maxPrice")
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError({"minPrice": "Must not be above maxPrice."})
        return attrs

    def validate_limit(self, value: int) -> int:
        if value == 0:
            raise serializers.ValidationError("Use -1 for no pagination, or 1 to 1000.")
        return value

    def validate_sort(self, value: str) -> MarketSort | None:
        """Unknown sorts are ignored, as the contract says."""
        return MarketSort(value) if value in MarketSort._value2member_map_ else None


class SecureInventoryQueryIn(InventoryQueryIn):
    tradeUrl = serializers.CharField(max_length=200, help_text="the owner's trade URL")

    def validate_tradeUrl(self, value: str) -> str:
        if trade_url_platform_id(value) is None:
            raise serializers.ValidationError("Not a valid trade URL.")
        return value


class TradeUrlField(StrictCharField):
    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if trade_url_platform_id(value) is None:
            raise serializers.ValidationError("Not a valid trade URL.")
        return value


class CheckTradeUrlIn(StrictSerializer):
    tradeurl = TradeUrlField(max_length=200)
    forceRefresh = StrictBooleanField(required=False, default=False)


def _game_body(games: tuple[int, ...] = GAMES) -> GameField:
    return GameField(games=games, required=False, default=730)


class WithdrawItemIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256)
    price = StrictDecimalField(max_digits=None, decimal_places=None, max_value=MAX_ITEM_PRICE)
    externalId = StrictCharField(min_length=1, max_length=128, required=False)
    amount = StrictIntegerField(min_value=1, max_value=1_000_000, required=False, default=1)


def _unique_item_ids(items: list[dict[str, Any]]) -> None:
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item["itemId"] in seen:
            raise serializers.ValidationError({f"items.{index}.itemId": "Listed twice."})
        seen.add(item["itemId"])


# What both withdrawal routes take; each adds its own fields. (A comment: a serializer's docstring
# is its component's description in the OpenAPI document.)
class WithdrawIn(StrictSerializer):
    items = WithdrawItemIn(many=True)
    game = _game_body()
    externalId = StrictCharField(max_length=128, required=False, allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        _unique_item_ids(attrs["items"])
        return attrs


class ClientWithdrawIn(WithdrawIn):
    autoCancel = StrictIntegerField(min_value=30, max_value=720, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "autoCancel" in attrs and attrs["game"] != CS_GAME:
            raise serializers.ValidationError({"autoCancel": "Only for game 730."})
        return super().validate(attrs)


class SecureBuyIn(WithdrawIn):
    tradeUrl = StrictCharField(max_length=300)


class TradesQueryIn(serializers.Serializer):
    cursor = serializers.CharField(
        max_length=200, required=False, help_text="nextCursor of the previous page"
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    type = serializers.ChoiceField(choices=["deposit", "withdraw"], required=False)
    game = _game()


class QuickWithdrawIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256, required=False)
    marketHashName = StrictCharField(max_length=200, required=False)
    maxPrice = StrictDecimalField(max_digits=None, decimal_places=None, max_value=MAX_ITEM_PRICE)
    amount = StrictIntegerField(min_value=1, max_value=200)
    delivery = StrictChoiceField(
        choices=["standard", "instant"], required=False, default="standard"
    )
    phase = StrictChoiceField(choices=list(PHASES), required=False, default="")
    game = GameField(games=GAMES, required=False, default=730)
    externalId = StrictCharField(max_length=128, required=False, allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("itemId") and not attrs.get("marketHashName"):
            raise serializers.ValidationError({"itemId": "Give itemId or marketHashName."})
        if attrs["maxPrice"] <= 0:
            raise serializers.ValidationError({"maxPrice": "Must be above 0."})
        if attrs["phase"] and attrs["delivery"] == "instant":
            raise serializers.ValidationError({"phase": "Cannot combine with delivery instant."})
        return attrs


class SecureQuickBuyIn(QuickWithdrawIn):
    tradeUrl = StrictCharField(max_length=300)


class DepositItemIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256)
    price = StrictDecimalField(
        max_digits=None, decimal_places=None, min_value=Decimal(0), max_value=MAX_ITEM_PRICE
    )
    amount = StrictIntegerField(min_value=1, max_value=10_000, required=False, default=1)


class ClientDepositIn(StrictSerializer):
    items = DepositItemIn(many=True)
    game = _game_body()
    externalId = StrictCharField(max_length=128, required=False, allow_blank=True)
    isInstant = StrictBooleanField(required=False, default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        _unique_item_ids(attrs["items"])
        return attrs


class SecureSellIn(ClientDepositIn):
    tradeUrl = StrictCharField(max_length=300)
