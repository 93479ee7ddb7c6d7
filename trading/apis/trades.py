"""Trade history for merchants (self trades) and clients (their own trades)."""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import DomainError
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.models import Trade
from trading.representations import TradeOrTrades, TradeOut, TradePageOut, trade_json
from trading.selectors.trades import (
    TradeFilter,
    client_trade_scope,
    client_trades,
    merchant_self_trades,
    trade_get,
    trades_by_refs,
    trades_page,
)
from trading.serializers import TradesQueryIn


class TradesApi(CallerApiView):
    """A page of trades, newest first: ``GET /secure/trades`` (the merchant's self trades) and
    ``GET /client/trades`` (the token's own)."""

    query_serializer = TradesQueryIn

    def trades(self, request: Request, *, game: int, type: str | None) -> TradeFilter:
        raise NotImplementedError

    @extend_schema(tags=["trades"], responses=TradePageOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        where = self.trades(request, game=int(query["game"]), type=query.get("type"))
        return Response(trades_page(where=where, cursor=query.get("cursor"), limit=query["limit"]))


class SecureTradesApi(MerchantApiView, TradesApi):
    operation = "secure.trades.list"
    operation_id = "listSecureTrades"

    def trades(self, request: Request, *, game: int, type: str | None) -> TradeFilter:
        return merchant_self_trades(merchant=self.merchant(request), game=game, type=type)


class ClientTradesApi(ClientApiView, TradesApi):
    operation = "client.trades.list"
    operation_id = "listClientTrades"

    def trades(self, request: Request, *, game: int, type: str | None) -> TradeFilter:
        caller = self.caller(request)
        return client_trades(
            merchant=caller.merchant, platform_id=caller.platform_id, game=game, type=type
        )


class TradeApi(CallerApiView):
    """One trade by its id or externalId: ``GET /secure/trades/{tradeId}`` (the merchant's self
    trades; comma-separated refs answer the array of those found) and ``GET
    /client/trades/{id}`` (the token's own)."""

    errors = ("TRADE_NOT_FOUND",)

    def scope(self, request: Request) -> QuerySet[Trade]:
        raise NotImplementedError

    def trade(self, request: Request, ref: str) -> Response:
        trade = trade_get(scope=self.scope(request), ref=ref)
        if trade is None:
            raise DomainError("TRADE_NOT_FOUND")
        return Response(trade_json(trade, list(trade.items.all())))


class SecureTradeApi(MerchantApiView, TradeApi):
    operation = "secure.trades.get"
    operation_id = "getSecureTrade"

    def scope(self, request: Request) -> QuerySet[Trade]:
        return Trade.objects.filter(merchant=self.merchant(request), source=Trade.Source.SELF)

    @extend_schema(
        tags=["trades"],
        parameters=[
            OpenApiParameter(
                "tradeId",
                str,
                OpenApiParameter.PATH,
                description="id or externalId; up to 100 comma-separated refs give an array",
            )
        ],
        responses=TradeOrTrades,
    )
    def get(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        if "," not in tradeId:
            return self.trade(request, tradeId)
        refs = [ref.strip() for ref in tradeId.split(",")]
        trades = trades_by_refs(scope=self.scope(request), refs=refs)
        return Response([trade_json(trade, list(trade.items.all())) for trade in trades])


class ClientTradeApi(ClientApiView, TradeApi):
    operation = "client.trades.get"
    operation_id = "getClientTrade"

    def scope(self, request: Request) -> QuerySet[Trade]:
        caller = self.caller(request)
        return client_trade_scope(merchant=caller.merchant, platform_id=caller.platform_id)

    @extend_schema(
        tags=["trades"],
        parameters=[
            OpenApiParameter("id", str, OpenApiParameter.PATH, description="id or externalId")
        ],
        responses=TradeOut,
    )
    def get(self, request: Request, id: str) -> Response:
        return self.trade(request, id)
