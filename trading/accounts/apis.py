"""Inventories with deposit offers, and trade URL checks."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.ratelimits import CHECK_TRADEURL, CLIENT_INVENTORY, SECURE_INVENTORY, Limited
from merchants.tradeurls import trade_url_platform_id
from merchants.views import ClientApiView, MerchantApiView
from trading.accounts import examples
from trading.accounts.inputs import CheckTradeUrlIn, InventoryQueryIn, SecureInventoryQueryIn
from trading.accounts.rendered import inventory_page
from trading.accounts.selectors.inventory import InventoryQuery, TradeUrlInventory
from trading.accounts.selectors.tradeurls import trade_url_check
from trading.accounts.shapes import InventoryOut, TradeUrlCheckOut, trade_url_check_json
from trading.trades.examples import OWNER_TRADE_URL

INVENTORY = """
    {whose}, each with the service's deposit offer: `offer.price` is what the service pays for
    it (USD), `offer.accepted: false` with `price: 0` when it takes none (not tradable, unknown to
    the catalog, worth under 0.10 USD, or the service's stock of it is full). Game 252490 stacks
    also show `offer.maxAmount`. To deposit, pass an item's `id` as `items[].itemId` and its
    `offer.price` as `items[].price` to `{deposit}`.

    The platform's answer is kept for 15 minutes per account and game (`updatedAt` says when it
    was read; `refresh=true` reads it again); offers are priced on every call.
    `acceptedOnly=true` keeps the accepted items before searching, filtering, sorting and
    paging, so `count` counts only them. `limit=-1` answers every item on one page; a `sort`
    other than the five listed is ignored.

    {collateral}

    The platform can refuse: a private inventory (`INVENTORY_PRIVATE`), an account that cannot
    trade (`USER_NOT_TRADEABLE`), no such user (`USER_NOT_FOUND`), the platform down or rate
    limiting (424, retry later), the service's bots offline (`NO_BOTS_AVAILABLE`) or degraded
    (`FLEET_DEGRADED`, retry after `Retry-After`).
"""


# What either inventory route may answer besides the generic errors.
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


class SecureInventoryApi(MerchantApiView):
    """The items of the account behind ``tradeUrl``, with the merchant's deposit offers."""

    rate_limit = Limited("secure.inventory", SECURE_INVENTORY)
    operation_id = "getSecureInventory"
    query_serializer = SecureInventoryQueryIn
    errors = INVENTORY_ERRORS
    doc = OperationDoc(
        summary="Get an account's inventory with deposit offers",
        description=INVENTORY.format(
            whose="The items of the account behind `tradeUrl` (any platform account)",
            deposit="POST /secure/sell",
            collateral="`collateral` is always 0 here: a self sell takes no risk evaluation.",
        ),
        parameters={"tradeUrl": OWNER_TRADE_URL, "game": "730"},
        response=examples.SECURE_INVENTORY,
    )

    @extend_schema(tags=["inventory"], responses=InventoryOut)
    def get(self, request: Request) -> Response:
        read: TradeUrlInventory = self.parse_query(request)
        platform_id = trade_url_platform_id(read.trade_url)
        assert platform_id is not None
        page = inventory_page(
            merchant=self.merchant(request), platform_id=platform_id, query=read.query, client=False
        )
        return Response(page)


class ClientInventoryApi(ClientApiView):
    """The client's own items, with the merchant's deposit offers and the client's collateral."""

    rate_limit = Limited("client.inventory", CLIENT_INVENTORY)
    operation_id = "getClientInventory"
    query_serializer = InventoryQueryIn
    query_is_value = True  # a frozen InventoryQuery of the query string alone
    errors = INVENTORY_ERRORS
    doc = OperationDoc(
        summary="Get the client's inventory with deposit offers",
        description=INVENTORY.format(
            whose="The items of the client's own platform account",
            deposit="POST /client/trading/deposit",
            collateral=(
                "`collateral` is how much of an instant deposit the service backs for this "
                "client now (USD): the limit its `clientData` earns, minus what its instant "
                "deposits in flight already use. Of an instant deposit worth more, you back "
                "the rest."
            ),
        ),
        parameters={"game": "730", "sort": "priceDesc"},
        response=examples.CLIENT_INVENTORY,
    )

    @extend_schema(tags=["inventory"], responses=InventoryOut)
    def get(self, request: Request) -> Response:
        query: InventoryQuery = self.parse_query(request)
        page = inventory_page(
            merchant=self.merchant(request),
            platform_id=self.caller(request).platform_id,
            query=query,
            client=True,
        )
        return Response(page)


class CheckTradeUrlApi(MerchantApiView):
    rate_limit = Limited("secure.check_tradeurl", CHECK_TRADEURL)
    body_serializer = CheckTradeUrlIn
    doc = OperationDoc(
        summary="Check whether a trade URL can trade",
        description="""
            Asks the game platform about the account behind a trade URL before you trade with
            it. `state` says what it found: 1 Normal, 2 Game730Banned, 3 Game252490Banned,
            4 Banned, 5 InventoryPrivate, 6 TradeUrlInvalid, 7 UserNotFound, 8 UnknownError,
            9 UserNotTradeable, 10 PlatformUnavailable; `message` says it in words and
            `canTrade` sums it up. `reason.escrowDays` above 0 means trades with the account are
            held (deposits are refused with `ESCROW_NOT_ALLOWED`); an anti-cheat ban
            (`bans.antiCheatBanned`, state 2) blocks deposits of game 730 only.

            Answers are kept for an hour per merchant and URL; `forceRefresh: true` asks the
            platform again. States 8 and 10 (the platform failed) are never kept: ask again
            later. A URL that is not a trade URL at all is refused with `VALIDATION_FAILED`.
        """,
        request={"tradeurl": OWNER_TRADE_URL, "forceRefresh": False},
        response=examples.TRADE_URL_CHECK,
    )

    @extend_schema(operation_id="checkTradeUrl", tags=["trade urls"], responses=TradeUrlCheckOut)
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        user = trade_url_check(
            merchant=self.merchant(request),
            url=body["tradeurl"],
            force_refresh=body["forceRefresh"],
        )
        return Response(trade_url_check_json(user))
