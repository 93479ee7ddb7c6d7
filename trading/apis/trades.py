"""Trade history for merchants (self trades) and clients (their own trades)."""

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core.errors import DomainError
from merchants.views import ClientApiView, MerchantApiView
from trading.apischema import TRADES_PARAMETERS, TradeOut, TradePageOut
from trading.models import Trade
from trading.representations import trade_json
from trading.selectors.trades import (
    client_trade_scope,
    client_trades,
    merchant_self_trades,
    trade_get,
    trades_by_refs,
    trades_page,
)
from trading.serializers import TradesQueryIn


class SecureTradesApi(MerchantApiView):
    operation = "secure.trades.list"

    @extend_schema(
        operation_id="listSecureTrades",
        tags=["trades"],
        parameters=TRADES_PARAMETERS,
        responses=TradePageOut,
    )
    def get(self, request: Request) -> Response:
        query = parse(TradesQueryIn, request.query_params)
        rows = merchant_self_trades(
            merchant=self.merchant(request), game=int(query["game"]), type=query.get("type")
        )
        return Response(trades_page(rows=rows, cursor=query.get("cursor"), limit=query["limit"]))


class SecureTradeApi(MerchantApiView):
    operation = "secure.trades.get"
    errors = ("TRADE_NOT_FOUND",)

    @extend_schema(
        operation_id="getSecureTrade",
        tags=["trades"],
        parameters=[
            OpenApiParameter(
                "tradeId",
                str,
                OpenApiParameter.PATH,
                description="id or externalId; up to 100 comma-separated refs give an array",
            )
        ],
        # One ref answers a Trade; a comma-separated list answers the array of those resolved.
        responses=PolymorphicProxySerializer(
            component_name="TradeOrTrades",
            serializers=[TradeOut, TradeOut(many=True)],
            resource_type_field_name=None,
            many=False,
        ),
    )
    def get(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        trade_ref = tradeId
        scope = Trade.objects.filter(merchant=self.merchant(request), source=Trade.Source.SELF)
        if "," in trade_ref:
            refs = [ref.strip() for ref in trade_ref.split(",")]
            trades = trades_by_refs(scope=scope, refs=refs)
            return Response([trade_json(trade, list(trade.items.all())) for trade in trades])
        trade = trade_get(scope=scope, ref=trade_ref)
        if trade is None:
            raise DomainError("TRADE_NOT_FOUND")
        return Response(trade_json(trade, list(trade.items.all())))


class ClientTradesApi(ClientApiView):
    operation = "client.trades.list"

    @extend_schema(
        operation_id="listClientTrades",
        tags=["trades"],
        parameters=TRADES_PARAMETERS,
        responses=TradePageOut,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request)
        query = parse(TradesQueryIn, request.query_params)
        rows = client_trades(
            merchant=caller.merchant,
            platform_id=caller.platform_id,
            game=int(query["game"]),
            type=query.get("type"),
        )
        return Response(trades_page(rows=rows, cursor=query.get("cursor"), limit=query["limit"]))


class ClientTradeApi(ClientApiView):
    operation = "client.trades.get"
    errors = ("TRADE_NOT_FOUND",)

    @extend_schema(
        operation_id="getClientTrade",
        tags=["trades"],
        parameters=[
            OpenApiParameter("id", str, OpenApiParameter.PATH, description="id or externalId")
        ],
        responses=TradeOut,
    )
    def get(self, request: Request, id: str) -> Response:
        trade_ref = id
        caller = self.caller(request)
        scope = client_trade_scope(merchant=caller.merchant, platform_id=caller.platform_id)
        trade = trade_get(scope=scope, ref=trade_ref)
        if trade is None:
            raise DomainError("TRADE_NOT_FOUND")
        return Response(trade_json(trade, list(trade.items.all())))
