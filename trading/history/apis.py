"""Trade history for merchants (self trades) and clients (their own trades)."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from core.errors import DomainError
from merchants.authentication import ClientCaller, MerchantCaller
from merchants.models import Merchant
from merchants.ratelimits import CLIENT_TRADES, SECURE_TRADES, Limited
from merchants.views import CallerApiView, ClientApiView, MerchantApiView, Operation, Route
from trading.history import examples
from trading.history.inputs import TradesQueryIn
from trading.history.selectors import (
    MAX_REFS,
    MAX_REFS_LENGTH,
    TradeFilter,
    client_trades,
    merchant_self_trades,
    trade_refs_parse,
    trades_page,
)
from trading.history.shapes import TradeOrTrades, TradePageOut, trade_page_json
from trading.models import Trade
from trading.trades.selectors import client_trade_scope, trade_get, trades_by_refs
from trading.trades.shapes import TradeOut, trade_json

TRADE_PAGE = """
    {whose} trades of one game (`game`, 730 by default), newest first, deposits and withdrawals
    or only one `type`. Pass `nextCursor` as `cursor` to get the next page; `null` means there
    is none. A trade shows every item with its own `status`; the trade's `status` sums them up
    (while any item is in flight, the least advanced one). For changes as they happen,
    listen to the `trade.*` webhooks rather than polling this list.
"""


def trades_of(caller: MerchantCaller | ClientCaller, query: dict[str, Any]) -> TradeFilter:
    """A merchant lists its self trades; a client its own trades."""
    game, trade_type = int(query["game"]), query.get("type")
    if isinstance(caller, MerchantCaller):
        return merchant_self_trades(merchant=caller.merchant, game=game, type=trade_type)
    return client_trades(
        merchant=caller.merchant, platform_id=caller.platform_id, game=game, type=trade_type
    )


@extend_schema(tags=["trades"], responses=TradePageOut)
def trades(self: CallerApiView, request: Request) -> Response:
    query = self.parse_query(request)
    where = trades_of(self.caller(request), query)
    page = trades_page(where=where, cursor=query.get("cursor"), limit=query["limit"])
    return Response(trade_page_json(page))


SecureTradesApi, ClientTradesApi = Operation(
    method="get",
    handler=trades,
    input=TradesQueryIn,
    secure=Route(
        operation_id="listSecureTrades",
        rate_limit=Limited("secure.trades.list", SECURE_TRADES, shared="secure.trades"),
        doc=OperationDoc(
            summary="List your self trades",
            description=TRADE_PAGE.format(
                whose="Your self trades (`source: self`: `POST /secure/sell`, `/secure/buy`, "
                "`/secure/buy/quick`; your clients' trades are not listed here),"
            ),
            parameters={"limit": "2", "game": "730"},
            response=examples.SECURE_TRADE_PAGE,
        ),
    ),
    client=Route(
        operation_id="listClientTrades",
        rate_limit=Limited("client.trades.list", CLIENT_TRADES, shared="client.trades"),
        doc=OperationDoc(
            summary="List the client's trades",
            description=TRADE_PAGE.format(
                whose="The client's own trades (its deposits and withdrawals at this merchant),"
            ),
            parameters={"limit": "20", "game": "730"},
            response=examples.CLIENT_TRADE_PAGE,
        ),
    ),
).views()


def trade_found(scope: QuerySet[Trade], ref: str) -> Response:
    """The trade of ``scope`` whose id or externalId is ``ref``, or TRADE_NOT_FOUND."""
    trade = trade_get(scope=scope, ref=ref)
    if trade is None:
        raise DomainError("TRADE_NOT_FOUND")
    return Response(trade_json(trade, list(trade.items.all())))


def self_trade_scope(merchant: Merchant) -> QuerySet[Trade]:
    """A merchant looks up its self trades here; its clients' trades count as missing."""
    return Trade.objects.filter(merchant=merchant, source=Trade.Source.SELF)


class SecureTradeApi(MerchantApiView):
    """Self trades by id or externalId; comma-separated refs answer the array of those found."""

    rate_limit = Limited("secure.trades.get", SECURE_TRADES, shared="secure.trades")
    operation_id = "getSecureTrade"
    doc = OperationDoc(
        summary="Get self trades by id or externalId",
        description="""
            One of your self trades (`source: self`), by its `id` or the `externalId` you gave
            it: the trade with every item, as webhooks carry it. Another merchant's trade or a
            client's trade counts as missing (`TRADE_NOT_FOUND`).

            Up to 100 refs separated by commas answer the array of the trades found, in the
            order asked; refs that match nothing are left out without an error. More than 100
            refs are refused with `VALIDATION_FAILED`.
        """,
        parameters={"tradeId": examples.SELF_TRADE_REF},
        response=examples.SELF_TRADE_FOUND,
    )

    errors = ("TRADE_NOT_FOUND",)

    @extend_schema(
        tags=["trades"],
        parameters=[
            OpenApiParameter(
                "tradeId",
                # At most MAX_REFS refs, and within the URL limit.
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_REFS_LENGTH,
                    "pattern": rf"^[^,\u0000]*(,[^,\u0000]*){{0,{MAX_REFS - 1}}}$",
                },
                OpenApiParameter.PATH,
                description="id or externalId; up to 100 comma-separated refs give an array",
            )
        ],
        responses=TradeOrTrades,
    )
    def get(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        refs = trade_refs_parse(raw=tradeId)
        scope = self_trade_scope(self.merchant(request))
        if len(refs) == 1:
            return trade_found(scope, tradeId)
        trades = trades_by_refs(scope=scope, refs=refs)
        return Response([trade_json(trade, list(trade.items.all())) for trade in trades])


class ClientTradeApi(ClientApiView):
    """One of the token's own trades by its id or externalId."""

    rate_limit = Limited("client.trades.get", CLIENT_TRADES, shared="client.trades")
    operation_id = "getClientTrade"
    doc = OperationDoc(
        summary="Get one of the client's trades",
        description="""
            One of the client's own trades, by its `id` or its `externalId`, with every item and
            its own `status`, as the `trade.*` webhooks carry it: use it to show the client where
            a deposit or a withdrawal stands, or to check a trade after a webhook you missed. A
            trade of another account or another merchant answers `TRADE_NOT_FOUND`, as one that
            does not exist.
        """,
        parameters={"id": examples.CLIENT_TRADE_ID},
        response=examples.CLIENT_TRADE_FOUND,
    )

    errors = ("TRADE_NOT_FOUND",)

    @extend_schema(
        tags=["trades"],
        parameters=[
            OpenApiParameter("id", str, OpenApiParameter.PATH, description="id or externalId")
        ],
        responses=TradeOut,
    )
    def get(self, request: Request, id: str) -> Response:
        caller = self.caller(request)
        scope = client_trade_scope(merchant=caller.merchant, platform_id=caller.platform_id)
        return trade_found(scope, id)
