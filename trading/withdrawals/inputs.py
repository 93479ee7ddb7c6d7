"""The bodies of the withdrawal operations: listings bought for a recipient, and quick buys of
the cheapest listings of an item."""

from typing import Any

from core.api.serializers import (
    AboveZeroDecimalField,
    AnyOfRequired,
    GameField,
    OnlyWhen,
    StrictCharField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
    UniqueListField,
)
from trading.games import CS_GAME, GAMES, PHASES
from trading.trades.inputs import MAX_ITEM_PRICE, external_id_field, game_body_field
from trading.withdrawals.services.create import WithdrawalOrder, WithdrawItem
from trading.withdrawals.services.quick import QuickOrder


class WithdrawItemIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256)
    price = StrictDecimalField(max_digits=None, decimal_places=None, max_value=MAX_ITEM_PRICE)
    externalId = StrictCharField(min_length=1, max_length=128, required=False)
    amount = StrictIntegerField(min_value=1, max_value=1_000_000, required=False, default=1)

    def validate(self, attrs: dict[str, Any]) -> WithdrawItem:  # type: ignore[override]
        return WithdrawItem(
            item_id=attrs["itemId"],
            price=attrs["price"],
            external_id=attrs.get("externalId", ""),
            amount=attrs["amount"],
        )


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

    def validate(self, attrs: dict[str, Any]) -> WithdrawalOrder:  # type: ignore[override]
        attrs = super().validate(attrs)
        return WithdrawalOrder(
            items=attrs["items"],
            game=attrs["game"],
            external_id=attrs.get("externalId", ""),
            auto_cancel_minutes=self.auto_cancel_minutes(attrs),
            slippage_bps=attrs.get("slippageBps"),
            trade_url=attrs.get("tradeUrl", ""),
        )

    def auto_cancel_minutes(self, attrs: dict[str, Any]) -> int | None:
        """The body's ``autoCancel`` (game 730 only, the rule above); None: never."""
        minutes: int | None = attrs.get("autoCancel")
        return minutes


class ClientWithdrawIn(WithdrawIn):
    def auto_cancel_minutes(self, attrs: dict[str, Any]) -> int | None:
        """Game 730 only: the client's ``autoCancel``, 30 minutes when not given."""
        return attrs.get("autoCancel", 30) if attrs["game"] == CS_GAME else None


class SecureBuyIn(WithdrawIn):
    tradeUrl = StrictCharField(max_length=300)


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

    def validate(self, attrs: dict[str, Any]) -> QuickOrder:  # type: ignore[override]
        attrs = super().validate(attrs)
        return QuickOrder(
            item_id=attrs.get("itemId"),
            market_hash_name=attrs.get("marketHashName"),
            max_price=attrs["maxPrice"],
            amount=attrs["amount"],
            delivery=attrs["delivery"],
            phase=attrs.get("phase", ""),
            game=attrs["game"],
            external_id=attrs.get("externalId", ""),
            external_ids=attrs.get("externalIds", []),
            trade_url=attrs.get("tradeUrl", ""),
        )


class SecureQuickBuyIn(QuickWithdrawIn):
    tradeUrl = StrictCharField(max_length=300)
