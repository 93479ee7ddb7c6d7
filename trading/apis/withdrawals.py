"""Withdrawals: ``POST /secure/buy`` and ``POST /client/trading/withdraw``."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.authentication import ClientCaller
from merchants.selectors import client_get
from merchants.views import ClientApiView, MerchantApiView
from trading.apischema import TradeOut
from trading.models import Trade
from trading.representations import trade_json
from trading.serializers import (
    ClientWithdrawIn,
    QuickWithdrawIn,
    SecureBuyIn,
    SecureQuickBuyIn,
)
from trading.services.quick import quick_withdrawal_create
from trading.services.withdrawals import Recipient, WithdrawItemIn, withdrawal_create

WITHDRAW_ERRORS = (
    "EXTERNAL_ID_EXISTS",
    "MISSING_ITEMS",
    "TOO_MANY_ITEMS",
    "ITEMS_UNAVAILABLE",
    "PRICE_CHANGED",
    "MERCHANT_BALANCE_LOW",
    "INVALID_TRADEURL",
    "LISTING_NOT_FOUND",
    "LISTING_PRICE_INVALID",
    "INVALID_LISTING_ID",
    "INSUFFICIENT_ITEM_AMOUNT",
    "EXCEEDS_MAX_AMOUNT",
    "USER_NOT_FOUND",
    "PLATFORM_UNAVAILABLE",
    "INVALID_AMOUNT",
    "MERCHANT_NO_CALLBACK_URL",
    "TRANSACTION_CONFLICT",
)


def client_recipient(caller: ClientCaller) -> Recipient:
    """The token's own account receives; its client row serializes its withdrawals."""
    return Recipient(
        trade_url=caller.trade_url,
        client=client_get(merchant=caller.merchant, platform_id=caller.platform_id),
        external_client_user_id=caller.client_id or "",
    )


def withdraw_items(raw: list[dict[str, Any]]) -> list[WithdrawItemIn]:
    return [
        WithdrawItemIn(
            item_id=entry["itemId"],
            price=entry["price"],
            external_id=entry.get("externalId", ""),
            amount=entry["amount"],
        )
        for entry in raw
    ]


class SecureBuyApi(MerchantApiView):
    operation = "secure.buy"
    errors = WITHDRAW_ERRORS

    @extend_schema(
        operation_id="secureBuy", tags=["withdrawals"], request=SecureBuyIn, responses=TradeOut
    )
    def post(self, request: Request) -> Response:
        body = parse(SecureBuyIn, request.data)
        trade = withdrawal_create(
            merchant=self.merchant(request),
            source=Trade.Source.SELF,
            recipient=Recipient(trade_url=body["tradeUrl"]),
            items=withdraw_items(body["items"]),
            game=body["game"],
            external_id=body.get("externalId", ""),
        )
        return Response(trade_json(trade))


class ClientWithdrawApi(ClientApiView):
    operation = "client.trading.withdraw"
    errors = (*WITHDRAW_ERRORS, "WITHDRAW_IN_PROGRESS")

    @extend_schema(
        operation_id="clientWithdraw",
        tags=["withdrawals"],
        request=ClientWithdrawIn,
        responses=TradeOut,
    )
    def post(self, request: Request) -> Response:
        caller = self.caller(request)
        body = parse(ClientWithdrawIn, request.data)
        game = body["game"]
        trade = withdrawal_create(
            merchant=caller.merchant,
            source=Trade.Source.CLIENT,
            recipient=client_recipient(caller),
            items=withdraw_items(body["items"]),
            game=game,
            external_id=body.get("externalId", ""),
            auto_cancel_minutes=body.get("autoCancel", 30) if game == 730 else None,
        )
        return Response(trade_json(trade))


QUICK_ERRORS = (
    "EXTERNAL_ID_EXISTS",
    "MERCHANT_BALANCE_LOW",
    "INVALID_TRADEURL",
    "LISTING_NOT_FOUND",
    "INSUFFICIENT_ITEM_AMOUNT",
    "USER_NOT_FOUND",
    "PLATFORM_UNAVAILABLE",
    "INVALID_AMOUNT",
    "QUICK_BUY_UNSUPPORTED_GAME",
    "MERCHANT_NO_CALLBACK_URL",
    "TRANSACTION_CONFLICT",
)


def _quick_order(body: dict[str, Any]) -> dict[str, Any]:
    """What to buy, from either quick route's body."""
    return {
        "item_id": body.get("itemId"),
        "market_hash_name": body.get("marketHashName"),
        "max_price": body["maxPrice"],
        "amount": body["amount"],
        "delivery": body["delivery"],
        "phase": body["phase"],
        "game": body["game"],
        "external_id": body.get("externalId", ""),
    }


class SecureQuickBuyApi(MerchantApiView):
    operation = "secure.buy.quick"
    errors = QUICK_ERRORS

    @extend_schema(
        operation_id="secureQuickBuy",
        tags=["withdrawals"],
        request=SecureQuickBuyIn,
        responses=TradeOut,
    )
    def post(self, request: Request) -> Response:
        body = parse(SecureQuickBuyIn, request.data)
        trade = quick_withdrawal_create(
            merchant=self.merchant(request),
            source=Trade.Source.SELF,
            recipient=Recipient(trade_url=body["tradeUrl"]),
            **_quick_order(body),
        )
        return Response(trade_json(trade))


class ClientQuickWithdrawApi(ClientApiView):
    operation = "client.trading.withdraw.quick"
    errors = (*QUICK_ERRORS, "WITHDRAW_IN_PROGRESS")

    @extend_schema(
        operation_id="clientQuickWithdraw",
        tags=["withdrawals"],
        request=QuickWithdrawIn,
        responses=TradeOut,
    )
    def post(self, request: Request) -> Response:
        caller = self.caller(request)
        body = parse(QuickWithdrawIn, request.data)
        trade = quick_withdrawal_create(
            merchant=caller.merchant,
            source=Trade.Source.CLIENT,
            recipient=client_recipient(caller),
            **_quick_order(body),
        )
        return Response(trade_json(trade))
