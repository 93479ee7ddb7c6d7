"""Deposits: ``POST /secure/sell`` and ``POST /client/trading/deposit``."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc, paragraphs
from merchants.ratelimits import CLIENT_TRADE, SECURE_TRADE, Limited
from merchants.selectors import client_get
from merchants.views import ClientApiView, MerchantApiView
from trading.deposits import examples
from trading.deposits.inputs import ClientDepositIn, SecureSellIn
from trading.deposits.services.order import Depositor, DepositOrder, SelfSell
from trading.deposits.services.store import deposit_create, self_sell_create
from trading.models import Trade
from trading.trades.shapes import TradeOut, trade_json

DEPOSIT_LIFECYCLE = """
    **What happens next.** The trade starts `initiated`; the service's bot makes the trade offer
    (`pending`), confirms and sends it (`active`, with `offerID` and `botInfo`). The owner
    accepts it in the platform (`hold`, `holdEndDate`: 8 days by default) or declines it or lets
    it expire after 15 minutes (`declined`). When the hold ends the trade is `completed`; a
    reversal on the platform during the hold makes it `reverted`. A webhook
    (`trade.<status>`) reports every change; `GET {lookup}` shows the trade at any time.

    Every item must be in the owner's inventory now, at its current `offer.price`
    (`PRICE_CHANGED` with `details.price` otherwise) and not already in another deposit that has
    not ended (`DEPOSIT_IN_PROGRESS`). An `externalId` is yours to track the trade: it is unique
    per merchant, used up even when the trade fails, and the trade can be looked up by it; a
    repeated one answers `EXTERNAL_ID_EXISTS`, so resending a request you got no answer to
    cannot make a second trade.
"""


# What either deposit route may answer besides the generic errors.
DEPOSIT_ERRORS = (
    "EXTERNAL_ID_EXISTS",
    "MISSING_ITEMS",
    "INVENTORY_FETCH_FAILED",
    "USER_NOT_TRADEABLE",
    "TOO_MANY_ITEMS",
    "ITEMS_UNAVAILABLE",
    "ITEMS_NOT_ACCEPTED",
    "ITEM_OVERSTOCKED",
    "PRICE_CHANGED",
    "INVALID_TRADEURL",
    "INSUFFICIENT_ITEM_AMOUNT",
    "EXCEEDS_MAX_AMOUNT",
    "DEPOSIT_IN_PROGRESS",
    "ESCROW_NOT_ALLOWED",
    "INVENTORY_PRIVATE",
    "PLATFORM_UNAVAILABLE",
    "PLATFORM_RATE_LIMITED",
    "USER_NOT_FOUND",
    "NO_BOTS_AVAILABLE",
    "FLEET_DEGRADED",
    "DEPOSITS_PAUSED",
    "INSTANT_DEPOSITS_DISABLED",
    "TRANSACTION_CONFLICT",
)


class SecureSellApi(MerchantApiView):
    """The owner of ``tradeUrl``'s items sold to the service, credited to the merchant."""

    rate_limit = Limited("secure.sell", SECURE_TRADE)
    operation_id = "secureSell"
    body_serializer = SecureSellIn
    errors = DEPOSIT_ERRORS
    doc = OperationDoc(
        summary="Sell an account's items to the service (self deposit)",
        description=paragraphs(
            """
            The merchant's own deposit: the items of the account behind `tradeUrl` (priced by
            `GET /secure/inventory`) are sold to the service and their value is credited to
            your wallet. The trade is `source: self`, `type: deposit`.

            Unlike a client deposit there is no risk evaluation, no per-client guard and no
            approval step: `preCredit` is the whole `totalPrice`, `pendingCredit` 0 and
            `collateral` 0; the value is credited when the owner accepts the offer, and a
            reversal takes it back from your balance, even below zero.
            """,
            DEPOSIT_LIFECYCLE.format(lookup="/secure/trades/{tradeId}"),
        ),
        request=examples.SELF_SELL_REQUEST,
        response=examples.SELF_SELL,
        error_details=examples.DEPOSIT_ERROR_DETAILS,
    )

    @extend_schema(tags=["deposits"], responses=TradeOut)
    def post(self, request: Request) -> Response:
        sell: SelfSell = self.parse_body(request)
        trade = self_sell_create(
            merchant=self.merchant(request), trade_url=sell.trade_url, order=sell.order
        )
        return Response(trade_json(trade))


class ClientDepositApi(ClientApiView):
    """The token's own items sold to the service."""

    rate_limit = Limited("client.trading.deposit", CLIENT_TRADE)
    operation_id = "clientDeposit"
    body_serializer = ClientDepositIn
    doc = OperationDoc(
        summary="Deposit the client's items",
        description=paragraphs(
            """
            The client sells items of its own inventory (priced by `GET /client/inventory`) to
            the service; their value is credited to your wallet. The trade is `source: client`,
            `type: deposit`.

            **Standard or instant.** A standard deposit (`isInstant: false`, the default) credits
            the value once the hold ends (`pendingCredit` until then). An instant one
            (`isInstant: true`, when enabled for your account, else
            `INSTANT_DEPOSITS_DISABLED`) credits it as soon as the owner accepts the offer
            (`preCredit`): the service backs up to the client's `collateral` of it, you back the
            rest (`collateral.merchant`, held from your balance until the hold ends) and lose it
            if the items are reversed.

            **Per-client guard.** A client may have at most 5 deposits not yet accepted
            (`initiated`, `pending`, `active`: else 429 `TOO_MANY_ACTIVE_TRADES`) and create at
            most 10 in 5 minutes (429 `RATE_LIMITED` with `Retry-After`); these are checked
            before anything else.
            """,
            DEPOSIT_LIFECYCLE.format(lookup="/client/trades/{id}"),
        ),
        request=examples.CLIENT_DEPOSIT_REQUEST,
        response=examples.CLIENT_DEPOSIT,
        error_details=examples.DEPOSIT_ERROR_DETAILS,
    )
    # The per-client guard: too many deposits of this client in flight.
    errors = (*DEPOSIT_ERRORS, "TOO_MANY_ACTIVE_TRADES")

    @extend_schema(tags=["deposits"], responses=TradeOut)
    def post(self, request: Request) -> Response:
        order: DepositOrder = self.parse_body(request)
        caller = self.caller(request)
        trade = deposit_create(
            merchant=caller.merchant,
            source=Trade.Source.CLIENT,
            depositor=Depositor(
                platform_id=caller.platform_id,
                trade_url=caller.trade_url,
                client=client_get(merchant=caller.merchant, platform_id=caller.platform_id),
                external_client_user_id=caller.client_id or "",
            ),
            order=order,
        )
        return Response(trade_json(trade))
