"""Deposits: ``POST /secure/sell`` and ``POST /client/trading/deposit``."""

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.selectors import client_get
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.models import Trade
from trading.representations import TradeOut, trade_json
from trading.serializers import ClientDepositIn, SecureSellIn
from trading.services.deposits import (
    DepositItemIn,
    Depositor,
    deposit_create,
    self_sell_create,
)


def deposit_order(body: dict[str, Any]) -> dict[str, Any]:
    """What to deposit, from either route's body."""
    return {
        "items": [
            DepositItemIn(item_id=entry["itemId"], price=entry["price"], amount=entry["amount"])
            for entry in body["items"]
        ],
        "game": body["game"],
        "external_id": body.get("externalId", ""),
        "is_instant": body["isInstant"],
    }


class DepositApi(CallerApiView):
    """An owner's items sold to the service: ``POST /secure/sell`` (the owner of ``tradeUrl``,
    credited to the merchant) and ``POST /client/trading/deposit`` (the token's own items)."""

    errors: ClassVar[tuple[str, ...]] = (
        "EXTERNAL_ID_EXISTS",
        "MISSING_ITEMS",
        "INVENTORY_FETCH_FAILED",
        "USER_NOT_TRADEABLE",
        "TOO_MANY_ITEMS",
        "ITEMS_UNAVAILABLE",
        "ITEMS_NOT_ACCEPTED",
        "ITEM_OVERSTOCKED",
        "PRICE_CHANGED",
        "INVALID_TRADEURL",
        "INSUFFICIENT_ITEM_AMOUNT",
        "EXCEEDS_MAX_AMOUNT",
        "DEPOSIT_IN_PROGRESS",
        "ESCROW_NOT_ALLOWED",
        "INVENTORY_PRIVATE",
        "PLATFORM_UNAVAILABLE",
        "PLATFORM_RATE_LIMITED",
        "USER_NOT_FOUND",
        "NO_BOTS_AVAILABLE",
        "FLEET_DEGRADED",
        "DEPOSITS_PAUSED",
        "INSTANT_DEPOSITS_DISABLED",
        "TRANSACTION_CONFLICT",
    )

    def deposit(self, request: Request, body: dict[str, Any]) -> Trade:
        raise NotImplementedError

    @extend_schema(tags=["deposits"], responses=TradeOut)
    def post(self, request: Request) -> Response:
        trade = self.deposit(request, self.parse_body(request))
        return Response(trade_json(trade))


class SecureSellApi(MerchantApiView, DepositApi):
    operation = "secure.sell"
    operation_id = "secureSell"
    body_serializer = SecureSellIn

    def deposit(self, request: Request, body: dict[str, Any]) -> Trade:
        return self_sell_create(
            merchant=self.merchant(request), trade_url=body["tradeUrl"], **deposit_order(body)
        )


class ClientDepositApi(ClientApiView, DepositApi):
    operation = "client.trading.deposit"
    operation_id = "clientDeposit"
    body_serializer = ClientDepositIn
    # The per-client guard: too many deposits of this client in flight.
    errors = (*DepositApi.errors, "TOO_MANY_ACTIVE_TRADES")

    def deposit(self, request: Request, body: dict[str, Any]) -> Trade:
        caller = self.caller(request)
        return deposit_create(
            merchant=caller.merchant,
            source=Trade.Source.CLIENT,
            depositor=Depositor(
                platform_id=caller.platform_id,
                trade_url=caller.trade_url,
                client=client_get(merchant=caller.merchant, platform_id=caller.platform_id),
                external_client_user_id=caller.client_id or "",
            ),
            **deposit_order(body),
        )
