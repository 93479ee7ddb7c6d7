"""Response shapes for the OpenAPI description (these serializers only document; the
representations module builds the bodies)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

from trading.games import PHASES
from trading.marketplace.base import MarketSort


def _usd(*, allow_null: bool = False, required: bool = True) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=14,
        decimal_places=2,
        coerce_to_string=False,
        allow_null=allow_null,
        required=required,
    )


class BotInfoOut(serializers.Serializer):
    name = serializers.CharField()
    avatar = serializers.CharField()
    platformId = serializers.CharField()


class StickerOut(serializers.Serializer):
    name = serializers.CharField()
    marketHashName = serializers.CharField()
    slot = serializers.IntegerField()
    wear = serializers.FloatField()
    iconUrl = serializers.CharField()


class CharmOut(serializers.Serializer):
    name = serializers.CharField()
    marketHashName = serializers.CharField()
    iconUrl = serializers.CharField()


class DopplerOut(serializers.Serializer):
    name = serializers.ChoiceField(choices=list(PHASES))
    paintIndex = serializers.IntegerField()


class _ItemFields(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    marketHashName = serializers.CharField()
    type = serializers.CharField(required=False)
    iconUrl = serializers.CharField(required=False)
    appid = serializers.IntegerField()
    tradable = serializers.BooleanField()
    amount = serializers.IntegerField()
    marketPrice = _usd()
    rarity = serializers.CharField(required=False)
    color = serializers.CharField(required=False)
    exterior = serializers.CharField(required=False)
    wear = serializers.CharField(required=False)
    paintSeed = serializers.IntegerField(required=False)
    propId = serializers.CharField(required=False)
    previewToken = serializers.CharField(required=False)
    doppler = DopplerOut(required=False)
    charm = CharmOut(required=False)
    stickers = StickerOut(many=True, required=False)


class ListingOfferOut(serializers.Serializer):
    price = _usd()
    reference = serializers.CharField()
    delivery = serializers.ChoiceField(choices=["standard", "instant"])


class ListingOut(_ItemFields):
    offer = ListingOfferOut()
    botInfo = BotInfoOut(required=False)


class MarketPageOut(serializers.Serializer):
    items = ListingOut(many=True)
    count = serializers.IntegerField()


class InventoryOfferOut(serializers.Serializer):
    price = _usd()
    accepted = serializers.BooleanField()
    maxAmount = serializers.IntegerField(required=False)


class InventoryItemOut(_ItemFields):
    assetId = serializers.CharField()
    offer = InventoryOfferOut()


class InventoryOut(serializers.Serializer):
    inventory = InventoryItemOut(many=True)
    count = serializers.IntegerField()
    updatedAt = serializers.DateTimeField()
    collateral = _usd()


class WithdrawPricesOut(serializers.Serializer):
    standard = _usd(allow_null=True)
    instant = _usd(allow_null=True)


@extend_schema_field(
    {
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "standard": {"type": "number", "nullable": True},
                    "instant": {"type": "number", "nullable": True},
                },
                "required": ["standard", "instant"],
            },
            {"type": "number", "nullable": True},
        ],
        "description": "game 730: {standard, instant}; game 252490: one price; null: none",
    }
)
class WithdrawField(serializers.Field):
    pass


class PhaseEntryOut(serializers.Serializer):
    phase = serializers.ChoiceField(choices=list(PHASES))
    accepted = serializers.BooleanField()
    deposit = _usd()
    withdraw = WithdrawPricesOut()


class PriceEntryOut(serializers.Serializer):
    itemId = serializers.CharField(allow_null=True)
    marketHashName = serializers.CharField()
    accepted = serializers.BooleanField()
    deposit = _usd()
    withdraw = WithdrawField()
    phases = PhaseEntryOut(many=True, required=False)


class SuggestionOut(serializers.Serializer):
    id = serializers.CharField()
    marketHashName = serializers.CharField()
    iconUrl = serializers.CharField()
    rarity = serializers.CharField()
    rarityColor = serializers.CharField()
    itemType = serializers.CharField()


class ReasonOut(serializers.Serializer):
    escrowDays = serializers.IntegerField()
    probation = serializers.BooleanField()


class BansOut(serializers.Serializer):
    antiCheatBanned = serializers.BooleanField()
    gameBans = serializers.IntegerField()
    economyBan = serializers.ChoiceField(choices=["none", "probation", "banned"])


class TradeUrlCheckOut(serializers.Serializer):
    state = serializers.IntegerField(min_value=1, max_value=10)
    platformid = serializers.CharField()
    message = serializers.CharField()
    canTrade = serializers.BooleanField()
    reason = ReasonOut()
    bans = BansOut()


GAME = OpenApiParameter("game", str, enum=["730", "252490"], description="default 730")
PAGE = OpenApiParameter("page", int, description="default 1")
MARKET_PARAMETERS = [
    GAME,
    OpenApiParameter("search", str, description="case-insensitive substring, max 100 chars"),
    OpenApiParameter("sort", str, enum=[s.value for s in MarketSort]),
    OpenApiParameter("minPrice", OpenApiTypes.NUMBER, description="fee-inclusive USD"),
    OpenApiParameter("maxPrice", OpenApiTypes.NUMBER, description="fee-inclusive USD"),
    PAGE,
    OpenApiParameter("perPage", int, description="1-1000, default 50"),
]
MARKET_ITEM_PARAMETERS = [
    OpenApiParameter("itemId", str, description="catalog item id; wins over marketHashName"),
    OpenApiParameter("marketHashName", str, description="exact name"),
    OpenApiParameter("delivery", str, enum=["any", "standard", "instant"]),
    OpenApiParameter("phase", str, enum=list(PHASES)),
    OpenApiParameter("floatMin", OpenApiTypes.NUMBER, description="0-1"),
    OpenApiParameter("floatMax", OpenApiTypes.NUMBER, description="0-1"),
    PAGE,
    OpenApiParameter("perPage", int, description="1-100, default 50"),
]
INVENTORY_PARAMETERS = [
    GAME,
    OpenApiParameter("refresh", str, enum=["true", "false"], description="bypass the cache"),
    OpenApiParameter("acceptedOnly", str, enum=["true", "false"]),
    OpenApiParameter("search", str, description="max 100 chars"),
    OpenApiParameter("sort", str, description="relevance, priceAsc, priceDesc, nameAsc, nameDesc"),
    OpenApiParameter("minPrice", OpenApiTypes.NUMBER),
    OpenApiParameter("maxPrice", OpenApiTypes.NUMBER),
    PAGE,
    OpenApiParameter("limit", int, description="default 50; -1 disables pagination"),
]


class TradeItemOfferOut(serializers.Serializer):
    price = _usd()
    delivery = serializers.ChoiceField(choices=["standard", "instant"], required=False)


class TradeItemOut(serializers.Serializer):
    id = serializers.CharField()
    externalId = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    marketHashName = serializers.CharField(required=False)
    type = serializers.CharField(required=False)
    iconUrl = serializers.CharField(required=False)
    appid = serializers.IntegerField()
    tradable = serializers.BooleanField()
    amount = serializers.IntegerField()
    status = serializers.CharField()
    offer = TradeItemOfferOut()
    phase = serializers.CharField(required=False)
    error = serializers.CharField(required=False)
    offerID = serializers.CharField(required=False)
    holdEndDate = serializers.DateTimeField(required=False)


class CollateralOut(serializers.Serializer):
    merchant = _usd()
    provider = _usd()


class TradeOut(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=["deposit", "withdraw"])
    # The field is named as in the API; DRF takes it off the class, mypy sees Field.source.
    source = serializers.ChoiceField(choices=["client", "self"])  # type: ignore[assignment]
    status = serializers.CharField()
    game = serializers.ChoiceField(choices=["730", "252490"])
    externalId = serializers.CharField(required=False)
    merchantId = serializers.CharField()
    clientUserId = serializers.CharField(required=False)
    externalClientUserId = serializers.CharField(required=False)
    clientPlatformID = serializers.CharField()
    clientTradeUrl = serializers.CharField()
    items = TradeItemOut(many=True)
    totalPrice = _usd()
    preCredit = _usd(required=False)
    pendingCredit = _usd(required=False)
    isInstant = serializers.BooleanField(required=False)
    collateral = CollateralOut(required=False)
    holdEndDate = serializers.DateTimeField(required=False)
    offerID = serializers.CharField(required=False)
    botInfo = BotInfoOut(required=False)
    error = serializers.CharField(required=False)
    revertedBy = serializers.CharField(required=False)
    activeAt = serializers.DateTimeField(required=False)
    autoCancelAt = serializers.DateTimeField(required=False)
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


class TradePageOut(serializers.Serializer):
    items = TradeOut(many=True)
    nextCursor = serializers.CharField(allow_null=True)


TRADES_PARAMETERS = [
    OpenApiParameter("cursor", str, description="nextCursor of the previous page"),
    OpenApiParameter("limit", int, description="1-100, default 20"),
    OpenApiParameter("type", str, enum=["deposit", "withdraw"]),
    GAME,
]
