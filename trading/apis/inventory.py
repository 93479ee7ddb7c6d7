"""Inventories with deposit offers, and trade URL checks."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.models import Client
from merchants.selectors import client_get
from merchants.tradeurls import trade_url_platform_id
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.representations import InventoryOut, TradeUrlCheckOut
from trading.selectors.inventory import InventoryQuery, inventory_get
from trading.selectors.tradeurls import trade_url_check
from trading.serializers import CheckTradeUrlIn, InventoryQueryIn, SecureInventoryQueryIn


class InventoryApi(CallerApiView):
    """An owner's inventory with the merchant's deposit offers: ``GET /secure/inventory`` (the
    owner of ``tradeUrl``) and ``GET /client/inventory`` (the token's own)."""

    query_serializer = InventoryQueryIn
    errors = (
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

    def owner(self, request: Request, query: dict[str, Any]) -> tuple[str, Client | None]:
        """The owner's platform id, and its client row when it is one (for its collateral)."""
        raise NotImplementedError

    @extend_schema(tags=["inventory"], responses=InventoryOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        platform_id, client = self.owner(request, query)
        data = inventory_get(
            merchant=self.merchant(request),
            platform_id=platform_id,
            query=InventoryQuery(
                game=int(query["game"]),
                refresh=query["refresh"],
                accepted_only=query["acceptedOnly"],
                search=query["search"],
                sort=query["sort"],
                min_price=query.get("minPrice"),
                max_price=query.get("maxPrice"),
                page=query["page"],
                limit=query["limit"],
            ),
            client=client,
        )
        return Response(data)


class SecureInventoryApi(MerchantApiView, InventoryApi):
    operation = "secure.inventory"
    operation_id = "getSecureInventory"
    query_serializer = SecureInventoryQueryIn

    def owner(self, request: Request, query: dict[str, Any]) -> tuple[str, Client | None]:
        platform_id = trade_url_platform_id(query["tradeUrl"])
        assert platform_id is not None
        return platform_id, None


class ClientInventoryApi(ClientApiView, InventoryApi):
    operation = "client.inventory"
    operation_id = "getClientInventory"

    def owner(self, request: Request, query: dict[str, Any]) -> tuple[str, Client | None]:
        caller = self.caller(request)
        return caller.platform_id, client_get(
            merchant=caller.merchant, platform_id=caller.platform_id
        )


class CheckTradeUrlApi(MerchantApiView):
    operation = "secure.check_tradeurl"
    body_serializer = CheckTradeUrlIn

    @extend_schema(operation_id="checkTradeUrl", tags=["trade urls"], responses=TradeUrlCheckOut)
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        return Response(
            trade_url_check(
                merchant=self.merchant(request),
                url=body["tradeurl"],
                force_refresh=body["forceRefresh"],
            )
        )
