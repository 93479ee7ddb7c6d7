"""Query and body parsing of the withdrawal, quick withdrawal and trade history endpoints."""

from django.core.validators import RegexValidator
from rest_framework import serializers

from config.api.serializers import (
    AboveZeroDecimalField,
    AnyOfRequired,
    GameField,
    OnlyWhen,
    QueryIntegerField,
    StrictCharField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
    UniqueListField,
)
from trading.games import CS_GAME, GAMES, PHASES
from trading.selectors.trades import CURSOR_PATTERN
from trading.trades.inputs import (
    MAX_ITEM_PRICE,
    external_id_field,
    game_body_field,
    game_query_field,
)


class WithdrawItemIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256)
    price = StrictDecimalField(max_digits=None, decimal_places=None, max_value=MAX_ITEM_PRICE)
    externalId = StrictCharField(min_length=1, max_length=128, required=False)
    amount = StrictIntegerField(min_value=1, max_value=1_000_000, required=False, default=1)


# What both withdrawal routes take; the merchant's adds the recipient. (A comment: a serializer's
# docstring is its component's description in the OpenAPI document.)
class WithdrawIn(StrictSerializer):
    items = WithdrawItemIn(many=True)
    game = game_body_field()
    externalId = external_id_field()
    autoCancel = StrictIntegerField(
        min_value=30,
        max_value=720,
        required=False,
        help_text="game 730 only: minutes after creation to cancel undelivered items; 720 never",
    )
    slippageBps = StrictIntegerField(
        min_value=0,
        max_value=1000,
        required=False,
        help_text=(
            "basis points an item's current price may exceed its price by: it is then bought "
            "(and locked) at the current price; without it prices must match exactly"
        ),
    )

    rules = (OnlyWhen("autoCancel", "game", (CS_GAME, str(CS_GAME))),)


class ClientWithdrawIn(WithdrawIn):
    pass


class SecureBuyIn(WithdrawIn):
    tradeUrl = StrictCharField(max_length=300)


class TradesQueryIn(serializers.Serializer):
    cursor = StrictCharField(
        required=False,
        validators=[RegexValidator(CURSOR_PATTERN, "Not a cursor this service gives.")],
        help_text="nextCursor of the previous page",
    )
    limit = QueryIntegerField(min_value=1, max_value=100, default=20)
    type = serializers.ChoiceField(choices=["deposit", "withdraw"], required=False)
    game = game_query_field()


class QuickWithdrawIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256, required=False)
    marketHashName = StrictCharField(max_length=200, required=False)
    maxPrice = AboveZeroDecimalField(max_digits=None, decimal_places=None, max_value=MAX_ITEM_PRICE)
    amount = StrictIntegerField(min_value=1, max_value=200)
    delivery = StrictChoiceField(
        choices=["standard", "instant"], required=False, default="standard"
    )
    phase = StrictChoiceField(choices=list(PHASES), required=False)
    game = GameField(games=GAMES, required=False, default=730)
    externalId = external_id_field()
    externalIds = UniqueListField(
        child=StrictCharField(min_length=1, max_length=128),
        max_length=200,
        required=False,
        help_text=(
            "one per unit, in order, as items[].externalId would be; units past its end have "
            "none, and more ids than units is TOO_MANY_ITEMS"
        ),
    )

    rules = (
        AnyOfRequired(("itemId", "marketHashName")),
        OnlyWhen("phase", "delivery", ("standard",)),
    )


class SecureQuickBuyIn(QuickWithdrawIn):
    tradeUrl = StrictCharField(max_length=300)
