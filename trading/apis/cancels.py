"""Cancels of withdrawal items: whole trades and single items, for merchants and clients."""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.views import ClientApiView, MerchantApiView
from trading.models import Trade
from trading.selectors.trades import client_trade_scope
from trading.services.cancels import withdrawal_cancel, withdrawal_item_cancel

CANCEL_RESULT = inline_serializer(
    "CancelResult",
    {
        "tradeId": serializers.UUIDField(),
        "requested": serializers.IntegerField(),
        "cancelled": serializers.IntegerField(),
        "failed": serializers.IntegerField(),
        "items": inline_serializer(
            "CancelResultRow",
            {
                "itemId": serializers.CharField(),
                "externalId": serializers.CharField(required=False),
                "status": serializers.ChoiceField(choices=["cancelled", "failed"]),
                "reason": serializers.CharField(required=False),
            },
            many=True,
        ),
    },
)
ITEM_CANCEL_RESULT = inline_serializer(
    "ItemCancelResult",
    {
        "tradeId": serializers.UUIDField(),
        "itemId": serializers.CharField(),
        "externalId": serializers.CharField(required=False),
        "status": serializers.ChoiceField(choices=["cancelled"]),
    },
)
TRADE_ID = OpenApiParameter("tradeId", str, OpenApiParameter.PATH, description="id or externalId")
ITEM_ID = OpenApiParameter("itemId", str, OpenApiParameter.PATH, description="id or externalId")
TRADE_CANCEL_ERRORS = (
    "TRADE_NOT_CANCELLABLE",
    "TRADE_CANCEL_UNSUPPORTED",
    "ITEM_NOT_FOUND",
    "TRANSACTION_CONFLICT",
)
ITEM_CANCEL_ERRORS = (*TRADE_CANCEL_ERRORS, "TRADE_CANCEL_TOO_SOON")


class SecureBuyCancelApi(MerchantApiView):
    operation = "secure.buy.cancel"
    errors = (*TRADE_CANCEL_ERRORS, "FORBIDDEN")

    @extend_schema(
        operation_id="secureBuyCancel",
        tags=["cancels"],
        request=None,
        parameters=[TRADE_ID],
        responses=CANCEL_RESULT,
    )
    def post(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        result = withdrawal_cancel(
            scope=Trade.objects.filter(merchant=self.merchant(request)),
            trade_ref=tradeId,
            self_only=True,
            actor="merchant",
        )
        return Response(result)


class SecureBuyItemCancelApi(MerchantApiView):
    operation = "secure.buy.item_cancel"
    errors = (*ITEM_CANCEL_ERRORS, "FORBIDDEN")

    @extend_schema(
        operation_id="secureBuyItemCancel",
        tags=["cancels"],
        request=None,
        parameters=[TRADE_ID, ITEM_ID],
        responses=ITEM_CANCEL_RESULT,
    )
    def post(self, request: Request, tradeId: str, itemId: str) -> Response:  # noqa: N803
        result = withdrawal_item_cancel(
            scope=Trade.objects.filter(merchant=self.merchant(request)),
            trade_ref=tradeId,
            item_ref=itemId,
            self_only=True,
            actor="merchant",
        )
        return Response(result)


def _client_scope(view: ClientApiView, request: Request) -> QuerySet[Trade]:
    caller = view.caller(request)
    return client_trade_scope(merchant=caller.merchant, platform_id=caller.platform_id)


class ClientWithdrawCancelApi(ClientApiView):
    operation = "client.trading.withdraw.cancel"
    errors = TRADE_CANCEL_ERRORS

    @extend_schema(
        operation_id="clientWithdrawCancel",
        tags=["cancels"],
        request=None,
        parameters=[TRADE_ID],
        responses=CANCEL_RESULT,
    )
    def post(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        result = withdrawal_cancel(
            scope=_client_scope(self, request), trade_ref=tradeId, self_only=False, actor="client"
        )
        return Response(result)


class ClientWithdrawItemCancelApi(ClientApiView):
    operation = "client.trading.withdraw.item_cancel"
    errors = ITEM_CANCEL_ERRORS

    @extend_schema(
        operation_id="clientWithdrawItemCancel",
        tags=["cancels"],
        request=None,
        parameters=[TRADE_ID, ITEM_ID],
        responses=ITEM_CANCEL_RESULT,
    )
    def post(self, request: Request, tradeId: str, itemId: str) -> Response:  # noqa: N803
        result = withdrawal_item_cancel(
            scope=_client_scope(self, request),
            trade_ref=tradeId,
            item_ref=itemId,
            self_only=False,
            actor="client",
        )
        return Response(result)
