"""Body parsing of the deposit routes (``POST /client/trading/deposit``, ``POST /secure/sell``):
each serializer hands the view the service's input (``trading.deposits.services.order``)."""

from decimal import Decimal
from typing import Any

from rest_framework.fields import empty

from core.api.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from trading.deposits.services.order import DepositItem, DepositOrder, SelfSell
from trading.trades.inputs import MAX_ITEM_PRICE, external_id_field, game_body_field


class DepositItemIn(StrictSerializer):
    itemId = StrictCharField(min_length=5, max_length=256)
    price = StrictDecimalField(
        max_digits=None, decimal_places=None, min_value=Decimal(0), max_value=MAX_ITEM_PRICE
    )
    amount = StrictIntegerField(min_value=1, max_value=10_000, required=False, default=1)

    def run_validation(self, data: Any = empty) -> DepositItem:
        item = super().run_validation(data)
        return DepositItem(item_id=item["itemId"], price=item["price"], amount=item["amount"])


class ClientDepositIn(StrictSerializer):
    items = DepositItemIn(many=True)
    game = game_body_field()
    externalId = external_id_field()
    isInstant = StrictBooleanField(required=False, default=False)

    def run_validation(self, data: Any = empty) -> DepositOrder:
        return deposit_order(super().run_validation(data))


class SecureSellIn(ClientDepositIn):
    tradeUrl = StrictCharField(max_length=300)

    def run_validation(self, data: Any = empty) -> SelfSell:  # type: ignore[override]
        body = StrictSerializer.run_validation(self, data)
        return SelfSell(trade_url=body["tradeUrl"], order=deposit_order(body))


def deposit_order(body: dict[str, Any]) -> DepositOrder:
    return DepositOrder(
        items=body["items"],
        game=body["game"],
        external_id=body.get("externalId", ""),
        is_instant=body["isInstant"],
    )
