"""Price book, market browsing and suggestions."""

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.rendering import envelope_around
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.marketplace.base import MarketSort
from trading.representations import ListingOut, MarketPageOut, PriceEntryOut, SuggestionOut
from trading.selectors.market import (
    market_item_listings,
    market_search,
    market_suggestions,
)
from trading.selectors.prices import price_book_get
from trading.serializers import MarketItemQueryIn, MarketQueryIn, PricesQuery, SuggestionsQueryIn


class PricesApi(MerchantApiView):
    operation = "secure.prices"
    query_serializer = PricesQuery

    @extend_schema(operation_id="getPrices", tags=["prices"], responses=list[PriceEntryOut])
    def get(self, request: Request) -> HttpResponse:
        query = self.parse_query(request)
        return envelope_around(price_book_get(merchant=self.merchant(request), game=query["game"]))


class MarketSearchApi(CallerApiView):
    """A page of listings with the merchant's fee: ``GET /secure/market`` and
    ``GET /client/market``."""

    query_serializer = MarketQueryIn

    @extend_schema(tags=["market"], responses=MarketPageOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
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


class SecureMarketApi(MerchantApiView, MarketSearchApi):
    operation = "secure.market"
    operation_id = "getSecureMarket"


class ClientMarketApi(ClientApiView, MarketSearchApi):
    operation = "client.market"
    operation_id = "getClientMarket"


class MarketItemApi(CallerApiView):
    """One catalog item's listings, cheapest first: ``GET /secure/market/item`` and
    ``GET /client/market/item``."""

    query_serializer = MarketItemQueryIn

    @extend_schema(tags=["market"], responses=list[ListingOut])
    def get(self, request: Request) -> Response:
        query: dict[str, Any] = self.parse_query(request)
        listings = market_item_listings(
            merchant=self.merchant(request),
            item_id=query.get("itemId"),
            market_hash_name=query.get("marketHashName"),
            delivery=query["delivery"],
            phase=query.get("phase", ""),
            float_min=query.get("floatMin"),
            float_max=query.get("floatMax"),
            page=query["page"],
            per_page=query["perPage"],
        )
        return Response(listings)


class SecureMarketItemApi(MerchantApiView, MarketItemApi):
    operation = "secure.market.item"
    operation_id = "getSecureMarketItem"


class ClientMarketItemApi(ClientApiView, MarketItemApi):
    operation = "client.market.item"
    operation_id = "getClientMarketItem"


class ClientSuggestionsApi(ClientApiView):
    operation = "client.market.suggestions"
    query_serializer = SuggestionsQueryIn

    @extend_schema(
        operation_id="getClientMarketSuggestions",
        tags=["market"],
        responses=list[SuggestionOut],
    )
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        return Response(market_suggestions(game=int(query["game"]), q=query["q"]))
