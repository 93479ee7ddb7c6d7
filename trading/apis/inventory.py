"""Inventories with deposit offers, and trade URL checks."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.selectors import client_get
from merchants.tradeurls import trade_url_platform_id
from merchants.views import ClientApiView, MerchantApiView
from trading.apischema import INVENTORY_PARAMETERS, InventoryOut, TradeUrlCheckOut
from trading.selectors.inventory import InventoryQuery, inventory_get
from trading.selectors.tradeurls import trade_url_check
from trading.serializers import CheckTradeUrlIn, InventoryQueryIn, SecureInventoryQueryIn

INVENTORY_ERRORS = (
    "INVENTORY_FETCH_FAILED",
    "USER_NOT_TRADEABLE",
    "INVENTORY_PRIVATE",
    "PLATFORM_UNAVAILABLE",
    "PLATFORM_RATE_LIMITED",
    "USER_NOT_FOUND",
    "NO_BOTS_AVAILABLE",
    "FLEET_DEGRADED",
    "DEPOSITS_PAUSED",
)


def _inventory_query(query: dict[str, Any]) -> InventoryQuery:
    return InventoryQuery(
        game=int(query["game"]),
        refresh=query["refresh"],
        accepted_only=query["acceptedOnly"],
        search=query["search"],
        sort=query["sort"],
        min_price=query.get("minPrice"),
        max_price=query.get("maxPrice"),
        page=query["page"],
        limit=query["limit"],
    )


class ClientInventoryApi(ClientApiView):
    operation = "client.inventory"
    errors = INVENTORY_ERRORS

    @extend_schema(
        operation_id="getClientInventory",
        tags=["inventory"],
        parameters=INVENTORY_PARAMETERS,
        responses=InventoryOut,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request)
        query = _inventory_query(parse(InventoryQueryIn, request.query_params))
        client = client_get(merchant=caller.merchant, platform_id=caller.platform_id)
        data = inventory_get(
            merchant=caller.merchant, platform_id=caller.platform_id, query=query, client=client
        )
        return Response(data)


class SecureInventoryApi(MerchantApiView):
    operation = "secure.inventory"
    errors = INVENTORY_ERRORS

    @extend_schema(
        operation_id="getSecureInventory",
        tags=["inventory"],
        parameters=[
            OpenApiParameter("tradeUrl", str, required=True, description="the owner's trade URL"),
            *INVENTORY_PARAMETERS,
        ],
        responses=InventoryOut,
    )
    def get(self, request: Request) -> Response:
        raw = parse(SecureInventoryQueryIn, request.query_params)
        platform_id = trade_url_platform_id(raw["tradeUrl"])
        assert platform_id is not None
        data = inventory_get(
            merchant=self.merchant(request),
            platform_id=platform_id,
            query=_inventory_query(raw),
            client=None,
        )
        return Response(data)


class CheckTradeUrlApi(MerchantApiView):
    operation = "secure.check_tradeurl"

    @extend_schema(
        operation_id="checkTradeUrl",
        tags=["trade urls"],
        request=CheckTradeUrlIn,
        responses=TradeUrlCheckOut,
    )
    def post(self, request: Request) -> Response:
        body = parse(CheckTradeUrlIn, request.data)
        return Response(
            trade_url_check(
                merchant=self.merchant(request),
                url=body["tradeurl"],
                force_refresh=body["forceRefresh"],
            )
        )
