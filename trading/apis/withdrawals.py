"""Withdrawals: ``POST /secure/buy`` and ``POST /client/trading/withdraw``, and their quick
variants ``POST /secure/buy/quick`` and ``POST /client/trading/withdraw/quick``."""

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.authentication import ClientCaller
from merchants.selectors import client_get
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.games import CS_GAME
from trading.models import Trade
from trading.representations import TradeOut, trade_json
from trading.serializers import (
    ClientWithdrawIn,
    QuickWithdrawIn,
    SecureBuyIn,
    SecureQuickBuyIn,
)
from trading.services.quick import quick_withdrawal_create
from trading.services.withdrawals import Recipient, WithdrawItemIn, withdrawal_create


class RecipientApi(CallerApiView):
    """A purchase for a recipient: the body's ``tradeUrl`` on a merchant route (a self trade),
    the token's own account on a client route."""

    source: ClassVar[str]

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        raise NotImplementedError


def client_recipient(caller: ClientCaller) -> Recipient:
    """The token's own account receives; its client row serializes its withdrawals."""
    return Recipient(
        trade_url=caller.trade_url,
        client=client_get(merchant=caller.merchant, platform_id=caller.platform_id),
        external_client_user_id=caller.client_id or "",
    )


class WithdrawApi(RecipientApi):
    """Listings bought for a recipient: ``POST /secure/buy`` and ``POST
    /client/trading/withdraw``."""

    errors: ClassVar[tuple[str, ...]] = (
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

    def auto_cancel_minutes(self, body: dict[str, Any]) -> int | None:
        """Minutes after which the withdrawal's items still pending are cancelled; None: never.
        The body's ``autoCancel`` (game 730 only, its serializer's rule)."""
        minutes: int | None = body.get("autoCancel")
        return minutes

    @extend_schema(tags=["withdrawals"], responses=TradeOut)
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        trade = withdrawal_create(
            merchant=self.merchant(request),
            source=self.source,
            recipient=self.recipient(request, body),
            items=[
                WithdrawItemIn(
                    item_id=entry["itemId"],
                    price=entry["price"],
                    external_id=entry.get("externalId", ""),
                    amount=entry["amount"],
                )
                for entry in body["items"]
            ],
            game=body["game"],
            external_id=body.get("externalId", ""),
            auto_cancel_minutes=self.auto_cancel_minutes(body),
            slippage_bps=body.get("slippageBps"),
        )
        return Response(trade_json(trade))


class SecureBuyApi(MerchantApiView, WithdrawApi):
    operation = "secure.buy"
    operation_id = "secureBuy"
    body_serializer = SecureBuyIn
    source = Trade.Source.SELF

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return Recipient(trade_url=body["tradeUrl"])


class ClientWithdrawApi(ClientApiView, WithdrawApi):
    operation = "client.trading.withdraw"
    operation_id = "clientWithdraw"
    body_serializer = ClientWithdrawIn
    source = Trade.Source.CLIENT
    # One withdrawal per user at a time.
    errors = (*WithdrawApi.errors, "WITHDRAW_IN_PROGRESS")

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return client_recipient(self.caller(request))

    def auto_cancel_minutes(self, body: dict[str, Any]) -> int | None:
        """Game 730 only: the client's ``autoCancel``, 30 minutes when not given."""
        return body.get("autoCancel", 30) if body["game"] == CS_GAME else None


class QuickWithdrawApi(RecipientApi):
    """The cheapest listings of one item up to a price, bought for a recipient: ``POST
    /secure/buy/quick`` and ``POST /client/trading/withdraw/quick``."""

    errors: ClassVar[tuple[str, ...]] = (
        "EXTERNAL_ID_EXISTS",
        "TOO_MANY_ITEMS",
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

    @extend_schema(tags=["withdrawals"], responses=TradeOut)
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        trade = quick_withdrawal_create(
            merchant=self.merchant(request),
            source=self.source,
            recipient=self.recipient(request, body),
            item_id=body.get("itemId"),
            market_hash_name=body.get("marketHashName"),
            max_price=body["maxPrice"],
            amount=body["amount"],
            delivery=body["delivery"],
            phase=body.get("phase", ""),
            game=body["game"],
            external_id=body.get("externalId", ""),
            external_ids=body.get("externalIds", []),
        )
        return Response(trade_json(trade))


class SecureQuickBuyApi(MerchantApiView, QuickWithdrawApi):
    operation = "secure.buy.quick"
    operation_id = "secureQuickBuy"
    body_serializer = SecureQuickBuyIn
    source = Trade.Source.SELF

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return Recipient(trade_url=body["tradeUrl"])


class ClientQuickWithdrawApi(ClientApiView, QuickWithdrawApi):
    operation = "client.trading.withdraw.quick"
    operation_id = "clientQuickWithdraw"
    body_serializer = QuickWithdrawIn
    source = Trade.Source.CLIENT
    errors = (*QuickWithdrawApi.errors, "WITHDRAW_IN_PROGRESS")

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return client_recipient(self.caller(request))
