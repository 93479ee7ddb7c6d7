"""Cancels of withdrawal items: whole trades and single items, for merchants and clients."""

from typing import ClassVar

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.authentication import ClientCaller
from merchants.models import Merchant
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.models import Trade
from trading.representations import CancelResult, ItemCancelResult
from trading.selectors.trades import client_trade_scope
from trading.services.cancels import withdrawal_cancel, withdrawal_item_cancel

TRADE_ID = OpenApiParameter("tradeId", str, OpenApiParameter.PATH, description="id or externalId")
ITEM_ID = OpenApiParameter("itemId", str, OpenApiParameter.PATH, description="id or externalId")


class CancelApi(CallerApiView):
    """What a cancel may touch: a merchant cancels its self trades (a client's trade answers
    FORBIDDEN), a client its own trades."""

    #: Who asks, as the trade's history records it.
    actor: ClassVar[str]
    self_only: ClassVar[bool]

    def scope(self, request: Request) -> QuerySet[Trade]:
        raise NotImplementedError


def merchant_scope(merchant: Merchant) -> QuerySet[Trade]:
    return Trade.objects.filter(merchant=merchant)


def client_scope(caller: ClientCaller) -> QuerySet[Trade]:
    return client_trade_scope(merchant=caller.merchant, platform_id=caller.platform_id)


class TradeCancelApi(CancelApi):
    """Every still-cancellable item of a withdrawal: ``POST /secure/buy/{tradeId}/cancel`` and
    ``POST /client/trading/withdraw/{tradeId}/cancel``."""

    errors: ClassVar[tuple[str, ...]] = (
        "TRADE_NOT_CANCELLABLE",
        "TRADE_CANCEL_UNSUPPORTED",
        "ITEM_NOT_FOUND",
        "TRANSACTION_CONFLICT",
    )

    @extend_schema(tags=["cancels"], parameters=[TRADE_ID], responses=CancelResult)
    def post(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        result = withdrawal_cancel(
            scope=self.scope(request), trade_ref=tradeId, self_only=self.self_only, actor=self.actor
        )
        return Response(result)


class SecureBuyCancelApi(MerchantApiView, TradeCancelApi):
    operation = "secure.buy.cancel"
    operation_id = "secureBuyCancel"
    errors = (*TradeCancelApi.errors, "FORBIDDEN")
    actor = "merchant"
    self_only = True

    def scope(self, request: Request) -> QuerySet[Trade]:
        return merchant_scope(self.merchant(request))


class ClientWithdrawCancelApi(ClientApiView, TradeCancelApi):
    operation = "client.trading.withdraw.cancel"
    operation_id = "clientWithdrawCancel"
    actor = "client"
    self_only = False

    def scope(self, request: Request) -> QuerySet[Trade]:
        return client_scope(self.caller(request))


class ItemCancelApi(CancelApi):
    """One item of a withdrawal, by its id or externalId: ``POST
    /secure/buy/{tradeId}/items/{itemId}/cancel`` and ``POST
    /client/trading/withdraw/{tradeId}/items/{itemId}/cancel``."""

    errors: ClassVar[tuple[str, ...]] = (*TradeCancelApi.errors, "TRADE_CANCEL_TOO_SOON")

    @extend_schema(tags=["cancels"], parameters=[TRADE_ID, ITEM_ID], responses=ItemCancelResult)
    def post(self, request: Request, tradeId: str, itemId: str) -> Response:  # noqa: N803
        result = withdrawal_item_cancel(
            scope=self.scope(request),
            trade_ref=tradeId,
            item_ref=itemId,
            self_only=self.self_only,
            actor=self.actor,
        )
        return Response(result)


class SecureBuyItemCancelApi(MerchantApiView, ItemCancelApi):
    operation = "secure.buy.item_cancel"
    operation_id = "secureBuyItemCancel"
    errors = (*ItemCancelApi.errors, "FORBIDDEN")
    actor = "merchant"
    self_only = True

    def scope(self, request: Request) -> QuerySet[Trade]:
        return merchant_scope(self.merchant(request))


class ClientWithdrawItemCancelApi(ClientApiView, ItemCancelApi):
    operation = "client.trading.withdraw.item_cancel"
    operation_id = "clientWithdrawItemCancel"
    actor = "client"
    self_only = False

    def scope(self, request: Request) -> QuerySet[Trade]:
        return client_scope(self.caller(request))
