"""``POST /sandbox/trades/{tradeId}/events``: the outside world's moves, on demand."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.views import MerchantApiView
from sandbox.serializers import SandboxTradeEventIn
from sandbox.services.trades import sandbox_trade_event
from trading.representations import TradeOut, trade_json


class SandboxTradeEventApi(MerchantApiView):
    operation = "sandbox"
    # PLATFORM_UNAVAILABLE: a deposit's offer_created / offer_sent the bots cannot make now.
    errors = ("TRADE_NOT_FOUND", "ITEM_NOT_FOUND", "INVALID_TRANSITION", "PLATFORM_UNAVAILABLE")

    @extend_schema(
        operation_id="sandboxTradeEvent",
        tags=["sandbox"],
        request=SandboxTradeEventIn,
        responses=TradeOut,
        parameters=[OpenApiParameter("tradeId", str, OpenApiParameter.PATH)],
    )
    def post(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        body = parse(SandboxTradeEventIn, request.data)
        trade = sandbox_trade_event(
            merchant=self.merchant(request),
            trade_ref=tradeId,
            event=body["event"],
            item_ids=body.get("itemIds"),
            actor="sandbox",
        )
        return Response(trade_json(trade))
