"""Price book, market browsing and suggestions."""

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.rendering import envelope_around
from config.api.serializers import parse
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.apischema import (
    MARKET_ITEM_PARAMETERS,
    MARKET_PARAMETERS,
    ListingOut,
    MarketPageOut,
    PriceEntryOut,
    SuggestionOut,
)
from trading.marketplace.base import MarketSort
from trading.selectors.market import (
    market_item_listings,
    market_search,
    market_suggestions,
)
from trading.selectors.prices import price_book_get
from trading.serializers import MarketItemQueryIn, MarketQueryIn, PricesQuery, SuggestionsQueryIn


class PricesApi(MerchantApiView):
    operation = "secure.prices"

    @extend_schema(
        operation_id="getPrices",
        tags=["prices"],
        parameters=[OpenApiParameter("game", int, description="integer > 0, default 730")],
        responses=PriceEntryOut(many=True),
    )
    def get(self, request: Request) -> HttpResponse:
        query = parse(PricesQuery, request.query_params)
        return envelope_around(price_book_get(merchant=self.merchant(request), game=query["game"]))


class _MarketApi(CallerApiView):
    def search(self, request: Request) -> Response:
        query = parse(MarketQueryIn, request.query_params)
        page = market_search(
            merchant=self.merchant(request),
            game=int(query["game"]),
            search=query["search"],
            sort=MarketSort(query["sort"]),
            min_price=query.get("minPrice"),
            max_price=query.get("maxPrice"),
            page=query["page"],
            per_page=query["perPage"],
        )
        return Response(page)


class SecureMarketApi(MerchantApiView, _MarketApi):
    operation = "secure.market"

    @extend_schema(
        operation_id="getSecureMarket",
        tags=["market"],
        parameters=MARKET_PARAMETERS,
        responses=MarketPageOut,
    )
    def get(self, request: Request) -> Response:
        return self.search(request)


class ClientMarketApi(ClientApiView, _MarketApi):
    operation = "client.market"

    @extend_schema(
        operation_id="getClientMarket",
        tags=["market"],
        parameters=MARKET_PARAMETERS,
        responses=MarketPageOut,
    )
    def get(self, request: Request) -> Response:
        return self.search(request)


class _MarketItemApi(CallerApiView):
    def listings(self, request: Request) -> Response:
        query: dict[str, Any] = parse(MarketItemQueryIn, request.query_params)
        listings = market_item_listings(
            merchant=self.merchant(request),
            item_id=query.get("itemId"),
            market_hash_name=query.get("marketHashName"),
            delivery=query["delivery"],
            phase=query["phase"],
            float_min=query.get("floatMin"),
            float_max=query.get("floatMax"),
            page=query["page"],
            per_page=query["perPage"],
        )
        return Response(listings)


class SecureMarketItemApi(MerchantApiView, _MarketItemApi):
    operation = "secure.market.item"

    @extend_schema(
        operation_id="getSecureMarketItem",
        tags=["market"],
        parameters=MARKET_ITEM_PARAMETERS,
        responses=ListingOut(many=True),
    )
    def get(self, request: Request) -> Response:
        return self.listings(request)


class ClientMarketItemApi(ClientApiView, _MarketItemApi):
    operation = "client.market.item"

    @extend_schema(
        operation_id="getClientMarketItem",
        tags=["market"],
        parameters=MARKET_ITEM_PARAMETERS,
        responses=ListingOut(many=True),
    )
    def get(self, request: Request) -> Response:
        return self.listings(request)


class ClientSuggestionsApi(ClientApiView):
    operation = "client.market.suggestions"

    @extend_schema(
        operation_id="getClientMarketSuggestions",
        tags=["market"],
        parameters=[
            OpenApiParameter("q", str, required=True, description="1-100 chars"),
            OpenApiParameter("game", str, enum=["730", "252490"]),
        ],
        responses=SuggestionOut(many=True),
    )
    def get(self, request: Request) -> Response:
        query = parse(SuggestionsQueryIn, request.query_params)
        return Response(market_suggestions(game=int(query["game"]), q=query["q"]))
