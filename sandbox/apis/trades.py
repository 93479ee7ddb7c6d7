"""``POST /sandbox/trades/{tradeId}/events``: the outside world's moves, on demand."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.serializers import SandboxTradeEventIn
from sandbox.services.trades import sandbox_trade_event
from trading.trades.shapes import TradeOut, trade_json


class SandboxTradeEventApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    # PLATFORM_UNAVAILABLE: a deposit's offer_created / offer_sent the bots cannot make now.
    errors = ("TRADE_NOT_FOUND", "ITEM_NOT_FOUND", "INVALID_TRANSITION", "PLATFORM_UNAVAILABLE")
    body_serializer = SandboxTradeEventIn
    doc = OperationDoc(
        summary="Move a trade as the outside world would",
        description="""
            Makes the next thing happen to one of your trades now, instead of waiting for the
            platform, the marketplace or the other party, so every path can be tested:

            - deposits: `offer_created` and `offer_sent` (the bot's steps, run now),
              `accepted`, `declined`, `hold_ended`, `reversed`, `failed`; all items move
              together (no `itemIds`).
            - withdrawals: `purchased` (bought and offered), `purchase_failed`, `accepted`,
              `declined`, `hold_ended`, `reversed`; `itemIds` (ids or externalIds) picks items,
              all of them when left out.

            Answers the trade as it now stands; the webhooks fire as for a real change. An event
            the trade's state does not allow answers `INVALID_TRANSITION`; a bot step the bots
            cannot make now `PLATFORM_UNAVAILABLE`; an unknown trade `TRADE_NOT_FOUND` and an
            unknown item of `itemIds` `ITEM_NOT_FOUND`. A withdrawal must have been approved
            first (your callback URL answered its `trade.initiated`).
        """,
        parameters={"tradeId": examples.TRADE_EVENT_TRADE["id"]},
        request=examples.TRADE_EVENT_REQUEST,
        response=examples.TRADE_EVENT_TRADE,
    )

    @extend_schema(
        operation_id="sandboxTradeEvent",
        tags=["sandbox"],
        responses=TradeOut,
        parameters=[
            OpenApiParameter("tradeId", str, OpenApiParameter.PATH, description="id or externalId")
        ],
    )
    def post(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        body = self.parse_body(request)
        trade = sandbox_trade_event(
            merchant=self.merchant(request),
            trade_ref=tradeId,
            event=body["event"],
            item_ids=body.get("itemIds"),
            actor="sandbox",
        )
        return Response(trade_json(trade))
