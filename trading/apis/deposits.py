"""Deposits: ``POST /client/trading/deposit`` and ``POST /secure/sell``."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.selectors import client_get
from merchants.views import ClientApiView, MerchantApiView
from trading.apischema import TradeOut
from trading.models import Trade
from trading.representations import trade_json
from trading.serializers import ClientDepositIn, SecureSellIn
from trading.services.deposits import (
    DepositItemIn,
    Depositor,
    deposit_create,
    self_sell_create,
)

# What both routes can refuse (the client route adds its guard's 429).
DEPOSIT_ERRORS = (
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


def _items(raw: list[dict[str, Any]]) -> list[DepositItemIn]:
    return [
        DepositItemIn(item_id=entry["itemId"], price=entry["price"], amount=entry["amount"])
        for entry in raw
    ]


def _options(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "items": _items(body["items"]),
        "game": body["game"],
        "external_id": body.get("externalId", ""),
        "is_instant": body["isInstant"],
    }


class ClientDepositApi(ClientApiView):
    operation = "client.trading.deposit"
    errors = (*DEPOSIT_ERRORS, "TOO_MANY_ACTIVE_TRADES")

    @extend_schema(
        operation_id="clientDeposit", tags=["deposits"], request=ClientDepositIn, responses=TradeOut
    )
    def post(self, request: Request) -> Response:
        caller = self.caller(request)
        body = parse(ClientDepositIn, request.data)
        trade = deposit_create(
            merchant=caller.merchant,
            source=Trade.Source.CLIENT,
            depositor=Depositor(
                platform_id=caller.platform_id,
                trade_url=caller.trade_url,
                client=client_get(merchant=caller.merchant, platform_id=caller.platform_id),
                external_client_user_id=caller.client_id or "",
            ),
            **_options(body),
        )
        return Response(trade_json(trade))


class SecureSellApi(MerchantApiView):
    operation = "secure.sell"
    errors = DEPOSIT_ERRORS

    @extend_schema(
        operation_id="secureSell", tags=["deposits"], request=SecureSellIn, responses=TradeOut
    )
    def post(self, request: Request) -> Response:
        body = parse(SecureSellIn, request.data)
        trade = self_sell_create(
            merchant=self.merchant(request), trade_url=body["tradeUrl"], **_options(body)
        )
        return Response(trade_json(trade))
