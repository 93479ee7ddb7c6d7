"""Price book, market browsing and suggestions."""

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from core.api.rendering import envelope_around
from merchants.ratelimits import (
    CLIENT_MARKET,
    CLIENT_MARKET_ITEM,
    CLIENT_SUGGESTIONS,
    PRICES,
    SECURE_MARKET,
    SECURE_MARKET_ITEM,
    Limited,
)
from merchants.views import CallerApiView, ClientApiView, MerchantApiView, Operation, Route
from trading.market import examples
from trading.market.inputs import MarketItemQueryIn, MarketQueryIn, PricesQuery, SuggestionsQueryIn
from trading.market.rendered.pages import (
    ItemSearch,
    MarketSearch,
    market_item_listings,
    market_search,
)
from trading.market.rendered.prices import price_book_get
from trading.market.selectors.listings import market_suggestions
from trading.market.shapes import (
    ListingOut,
    MarketPageOut,
    PriceEntryOut,
    SuggestionOut,
    suggestion_json,
)


class PricesApi(MerchantApiView):
    rate_limit = Limited("secure.prices", PRICES)
    query_serializer = PricesQuery
    doc = OperationDoc(
        summary="Get the price book of a game",
        description="""
            The service's quotes for every catalog item of a game, for showing prices in bulk.

            - `deposit`: what the service pays for the item in a deposit; `accepted: false` with
              `deposit: 0` when it takes none of it now (no quote, or its stock is full).
            - `withdraw`: the price to buy the item, your merchant fee included. Game 730:
              `{standard, instant}` (the cheapest supplier listing and the cheapest listing held
              by the service's bots; `null` when there is none). Game 252490: one number.
            - Phased items (Doppler) come as one entry with a `phases[]` breakdown; the entry's
              own `deposit` and `withdraw` are the floor over its phases.

            The book is a list of quotes and may be up to 30 seconds behind the market: a deposit
            is priced against `GET /secure/inventory` or `GET /client/inventory` and a withdrawal
            against the live listing (`PRICE_CHANGED` when they differ). A positive game the
            service does not trade answers an empty list.
        """,
        parameters={"game": "730"},
        response=examples.PRICE_BOOK,
    )

    @extend_schema(operation_id="getPrices", tags=["prices"], responses=list[PriceEntryOut])
    def get(self, request: Request) -> HttpResponse:
        query = self.parse_query(request)
        return envelope_around(price_book_get(merchant=self.merchant(request), game=query["game"]))


MARKET_SEARCH = """
    A page of the listings on the market, each with the price to buy it (`offer.price`, your
    merchant fee included) and its `offer.delivery`: `standard` (bought from a supplier, then sent
    by trade offer) or `instant` (held by one of the service's bots, named in `botInfo`). `count`
    is the number of listings matching the query.

    `search` matches a part of the market hash name, case-insensitively; `minPrice`/`maxPrice`
    bound `offer.price`. `relevance` (the default sort) puts the exact name first, then names
    starting with the search, then the rest, most-listed items first. `offer.reference` is the
    listing's catalog item id (for `GET {route}/market/item`).

    To buy, pass a listing's `id` as `items[].itemId` and its `offer.price` as `items[].price`
    to `{buy}`. Pages are kept for up to 30 seconds: a listing sold meanwhile can still show,
    and buying it answers `ITEMS_UNAVAILABLE`.
"""


@extend_schema(tags=["market"], responses=MarketPageOut)
def market(self: CallerApiView, request: Request) -> Response:
    search: MarketSearch = self.parse_query(request)
    return Response(market_search(merchant=self.merchant(request), search=search))


SecureMarketApi, ClientMarketApi = Operation(
    method="get",
    handler=market,
    input=MarketQueryIn,
    secure=Route(
        operation_id="getSecureMarket",
        rate_limit=Limited("secure.market", SECURE_MARKET),
        doc=OperationDoc(
            summary="Search the market's listings",
            description=MARKET_SEARCH.format(route="/secure", buy="POST /secure/buy"),
            parameters=examples.MARKET_QUERY,
            response=examples.MARKET_PAGE,
        ),
    ),
    client=Route(
        operation_id="getClientMarket",
        rate_limit=Limited("client.market", CLIENT_MARKET),
        doc=OperationDoc(
            summary="Search the market's listings for a client",
            description=MARKET_SEARCH.format(route="/client", buy="POST /client/trading/withdraw"),
            parameters=examples.MARKET_QUERY,
            response=examples.MARKET_PAGE,
        ),
    ),
).views()


MARKET_ITEM = """
    The listings of one catalog item, cheapest first, with their stickers, charm, wear and, for
    phased items, the Doppler phase. Name the item by `itemId` (its catalog id, such as
    `730-000040`: the price book's `itemId`, a market listing's `offer.reference`) or by its exact
    `marketHashName`; `itemId` wins when both are given. One of the two is required: a read
    with neither is refused with `VALIDATION_FAILED` (`fields.itemId`; the document cannot
    express a rule between two parameters). An unknown item answers an empty list.

    `delivery` keeps `standard` or `instant` listings only, and is applied after a page is
    fetched: a page may hold fewer than `perPage` listings. `phase` keeps one Doppler phase;
    `floatMin`/`floatMax` bound the wear. Buy a listing with `{buy}` (its `id` and
    `offer.price`).
"""


@extend_schema(tags=["market"], responses=list[ListingOut])
def market_item(self: CallerApiView, request: Request) -> Response:
    search: ItemSearch = self.parse_query(request)
    return Response(market_item_listings(merchant=self.merchant(request), search=search))


SecureMarketItemApi, ClientMarketItemApi = Operation(
    method="get",
    handler=market_item,
    input=MarketItemQueryIn,
    secure=Route(
        operation_id="getSecureMarketItem",
        rate_limit=Limited("secure.market.item", SECURE_MARKET_ITEM),
        doc=OperationDoc(
            summary="List one catalog item's listings",
            description=MARKET_ITEM.format(buy="POST /secure/buy"),
            parameters={"itemId": "730-000040", "phase": "Black Pearl"},
            response=[examples.KARAMBIT_LISTING],
        ),
    ),
    client=Route(
        operation_id="getClientMarketItem",
        rate_limit=Limited("client.market.item", CLIENT_MARKET_ITEM),
        doc=OperationDoc(
            summary="List one catalog item's listings for a client",
            description=MARKET_ITEM.format(buy="POST /client/trading/withdraw"),
            parameters={"itemId": "730-000040", "phase": "Black Pearl"},
            response=[examples.KARAMBIT_LISTING],
        ),
    ),
).views()


class ClientSuggestionsApi(ClientApiView):
    rate_limit = Limited("client.market.suggestions", CLIENT_SUGGESTIONS)
    query_serializer = SuggestionsQueryIn
    doc = OperationDoc(
        summary="Suggest catalog items for a search box",
        description="""
            Up to 20 catalog items whose market hash name contains `q` (case-insensitive): the
            exact name first, then names starting with `q`, then the others, most popular first.
            Made for type-ahead: each `id` is a catalog id to pass as `itemId` to
            `GET /client/market/item` or `POST /client/trading/withdraw/quick`. Items without a
            listing right now are suggested too.
        """,
        parameters={"q": "Karambit", "game": "730"},
        response=examples.SUGGESTIONS,
    )

    @extend_schema(
        operation_id="getClientMarketSuggestions",
        tags=["market"],
        responses=list[SuggestionOut],
    )
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        items = market_suggestions(game=int(query["game"]), q=query["q"])
        return Response([suggestion_json(item) for item in items])
