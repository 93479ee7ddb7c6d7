"""Withdrawals: ``POST /secure/buy`` and ``POST /client/trading/withdraw``, and their quick
variants ``POST /secure/buy/quick`` and ``POST /client/trading/withdraw/quick``."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc, paragraphs
from merchants.authentication import ClientCaller, MerchantCaller
from merchants.ratelimits import CLIENT_TRADE, SECURE_TRADE, Limited
from merchants.selectors import client_get
from merchants.views import CallerApiView, Operation, Route
from trading.models import Trade
from trading.trades.shapes import TradeOut, trade_json
from trading.withdrawals import examples
from trading.withdrawals.inputs import (
    ClientWithdrawIn,
    QuickWithdrawIn,
    SecureBuyIn,
    SecureQuickBuyIn,
)
from trading.withdrawals.services.create import Recipient, WithdrawalOrder, withdrawal_create
from trading.withdrawals.services.quick import QuickOrder, quick_withdrawal_create


def recipient(caller: MerchantCaller | ClientCaller, trade_url: str) -> tuple[str, Recipient]:
    """The trade's source and who receives: for a merchant, the account behind the body's
    ``trade_url`` (a self trade); for a client, the token's own account, whose client row
    serializes its withdrawals."""
    if isinstance(caller, MerchantCaller):
        return Trade.Source.SELF, Recipient(trade_url=trade_url)
    return Trade.Source.CLIENT, Recipient(
        trade_url=caller.trade_url,
        client=client_get(merchant=caller.merchant, platform_id=caller.platform_id),
        external_client_user_id=caller.client_id or "",
    )


WITHDRAWAL_LIFECYCLE = """
    **Approval first.** Nothing is bought before you approve: the service sends your callback
    URL the `trade.initiated` webhook; answer 2xx to approve, 4xx to reject (the trade `failed`,
    `MERCHANT_REJECTED`, the lock released). Without an answer after 3 attempts the trade fails
    with `APPROVAL_TIMEOUT`. Without an active callback URL the request is refused at once
    (`MERCHANT_NO_CALLBACK_URL`).

    **What happens next.** Approved items are bought (`pending`), then offered to the recipient
    (`active`, with `offerID`); the recipient accepts (`hold`: the trade protection window,
    `holdEndDate`) and the trade is `completed` when it ends. A listing gone or repriced fails
    its item and releases its part of the lock; a declined or expired offer (`declined`), a
    cancel (`canceled`) or a reversal (`reverted`) refund it. Items move on their own; the
    trade's `status` is the least advanced one in flight. Webhooks (`trade.<status>`,
    `trade.updated`) report every change; `GET {lookup}` shows the trade at any time. Created
    items carry what was submitted; `name`, `marketHashName`, `type` and `iconUrl` appear once
    resolved.
"""

EXTERNAL_ID = """
    `externalId` is yours to track the trade: unique per merchant, used up even when the trade
    fails, and the trade can be looked up by it. A repeated one answers `EXTERNAL_ID_EXISTS`,
    so resending a request you got no answer to cannot buy twice.
"""

WITHDRAW = """
    Buys market listings (from `GET {route}/market` or `GET {route}/market/item`) for
    {recipient}. Each item names a listing `id` and its current `offer.price`; a price that
    is no longer the listing's answers `PRICE_CHANGED` (`details.price` is the current one), a
    listing already sold `ITEMS_UNAVAILABLE`. Up to 50 items; `items[].externalId` is your
    reference of an item, echoed back and accepted by the cancel endpoints in place of its id.

    The total is locked from your wallet's available balance at once (`MERCHANT_BALANCE_LOW`
    when it cannot cover it) and settles item by item as they are delivered.
"""

ONE_AT_A_TIME = """
    One withdrawal per client at a time is written: a second one at the same moment is
    refused with `WITHDRAW_IN_PROGRESS` (retry).
"""

CLIENT_WITHDRAW = """
    One withdrawal per client at a time is written: a second one at the same moment is
    refused with `WITHDRAW_IN_PROGRESS` (retry). Your approval callback is where you
    check and deduct the client's balance on your side.

    `autoCancel` (game 730 only; 30 to 720 minutes, 30 when not given) cancels the items
    still being bought that long after creation (`autoCancelAt`).
"""

WITHDRAW_ERRORS = (
    "EXTERNAL_ID_EXISTS",
    "MISSING_ITEMS",
    "TOO_MANY_ITEMS",
    "ITEMS_UNAVAILABLE",
    "PRICE_CHANGED",
    "MERCHANT_BALANCE_LOW",
    "INVALID_TRADEURL",
    "LISTING_NOT_FOUND",
    "LISTING_PRICE_INVALID",
    "INVALID_LISTING_ID",
    "INSUFFICIENT_ITEM_AMOUNT",
    "EXCEEDS_MAX_AMOUNT",
    "USER_NOT_FOUND",
    "PLATFORM_UNAVAILABLE",
    "INVALID_AMOUNT",
    "MERCHANT_NO_CALLBACK_URL",
    "TRANSACTION_CONFLICT",
)


@extend_schema(tags=["withdrawals"], responses=TradeOut)
def withdraw(self: CallerApiView, request: Request) -> Response:
    order: WithdrawalOrder = self.parse_body(request)
    source, to = recipient(self.caller(request), order.trade_url)
    trade = withdrawal_create(
        merchant=self.merchant(request), source=source, recipient=to, order=order
    )
    return Response(trade_json(trade))


SecureBuyApi, ClientWithdrawApi = Operation(
    method="post",
    handler=withdraw,
    errors=WITHDRAW_ERRORS,
    secure=Route(
        operation_id="secureBuy",
        rate_limit=Limited("secure.buy", SECURE_TRADE),
        input=SecureBuyIn,
        doc=OperationDoc(
            summary="Buy listings for a trade URL (self withdrawal)",
            description=paragraphs(
                WITHDRAW.format(
                    route="/secure", recipient="the account behind `tradeUrl` (a self trade)"
                ),
                EXTERNAL_ID,
                WITHDRAWAL_LIFECYCLE.format(lookup="/secure/trades/{tradeId}"),
                """
                Undelivered items can be cancelled after 30 minutes with
                `POST /secure/buy/{tradeId}/cancel`.
                """,
            ),
            request=examples.SELF_BUY_REQUEST,
            response=examples.SELF_BUY,
            error_details=examples.WITHDRAW_ERROR_DETAILS,
        ),
    ),
    client=Route(
        operation_id="clientWithdraw",
        rate_limit=Limited("client.trading.withdraw", CLIENT_TRADE),
        input=ClientWithdrawIn,
        doc=OperationDoc(
            summary="Buy listings for the client (withdrawal)",
            description=paragraphs(
                WITHDRAW.format(route="/client", recipient="the client's own account"),
                CLIENT_WITHDRAW,
                EXTERNAL_ID,
                WITHDRAWAL_LIFECYCLE.format(lookup="/client/trades/{id}"),
            ),
            request=examples.CLIENT_WITHDRAW_REQUEST,
            response=examples.CLIENT_WITHDRAWAL,
            error_details=examples.WITHDRAW_ERROR_DETAILS,
        ),
        # One withdrawal per client at a time.
        errors=("WITHDRAW_IN_PROGRESS",),
    ),
).views()


QUICK_WITHDRAW = """
    Buys the `amount` cheapest listings of one catalog item (game 730 only) at or below
    `maxPrice` a unit, for {recipient}, without picking listings yourself. Name the item by
    `itemId` (its catalog id, such as `730-000003`) or by its exact `marketHashName`.
    `maxPrice` is fee-inclusive, like the price book's `withdraw`; the service takes its fee out
    to get what it pays a supplier. `delivery` picks the supplier (`standard`) or the service's
    own stock (`instant`); `phase` prices a Doppler phase (not with `instant`).

    The answer has one row per unit, each with the catalog id as a placeholder `id` and the
    ceiling as its `offer.price`; `totalPrice` is the worst case (`amount` x `maxPrice`), locked
    from your wallet at once. After your approval the marketplace fills what it can: each row is
    bound to a real listing at its actual price (the saving is refunded), and rows it could not
    fill fail and are refunded: a partial fill is normal. Nothing listed under the ceiling right
    now answers `INSUFFICIENT_ITEM_AMOUNT`.
"""


QUICK_WITHDRAW_ERRORS = (
    "EXTERNAL_ID_EXISTS",
    "TOO_MANY_ITEMS",
    "MERCHANT_BALANCE_LOW",
    "INVALID_TRADEURL",
    "LISTING_NOT_FOUND",
    "INSUFFICIENT_ITEM_AMOUNT",
    "USER_NOT_FOUND",
    "PLATFORM_UNAVAILABLE",
    "INVALID_AMOUNT",
    "QUICK_BUY_UNSUPPORTED_GAME",
    "MERCHANT_NO_CALLBACK_URL",
    "TRANSACTION_CONFLICT",
)


@extend_schema(tags=["withdrawals"], responses=TradeOut)
def quick_withdraw(self: CallerApiView, request: Request) -> Response:
    order: QuickOrder = self.parse_body(request)
    source, to = recipient(self.caller(request), order.trade_url)
    trade = quick_withdrawal_create(
        merchant=self.merchant(request), source=source, recipient=to, order=order
    )
    return Response(trade_json(trade))


SecureQuickBuyApi, ClientQuickWithdrawApi = Operation(
    method="post",
    handler=quick_withdraw,
    errors=QUICK_WITHDRAW_ERRORS,
    secure=Route(
        operation_id="secureQuickBuy",
        rate_limit=Limited("secure.buy.quick", SECURE_TRADE),
        input=SecureQuickBuyIn,
        doc=OperationDoc(
            summary="Buy the cheapest listings of an item for a trade URL (quick self withdrawal)",
            description=paragraphs(
                QUICK_WITHDRAW.format(recipient="the account behind `tradeUrl` (a self trade)"),
                EXTERNAL_ID,
                WITHDRAWAL_LIFECYCLE.format(lookup="/secure/trades/{tradeId}"),
            ),
            request=examples.SECURE_QUICK_BUY_REQUEST,
            response=examples.SELF_QUICK_BUY,
        ),
    ),
    client=Route(
        operation_id="clientQuickWithdraw",
        rate_limit=Limited(
            "client.trading.withdraw.quick", CLIENT_TRADE, shared="client.trading.withdraw"
        ),
        input=QuickWithdrawIn,
        doc=OperationDoc(
            summary="Buy the cheapest listings of an item for the client (quick withdrawal)",
            description=paragraphs(
                QUICK_WITHDRAW.format(recipient="the client's own account"),
                ONE_AT_A_TIME,
                EXTERNAL_ID,
                WITHDRAWAL_LIFECYCLE.format(lookup="/client/trades/{id}"),
            ),
            request=examples.QUICK_WITHDRAW_REQUEST,
            response=examples.QUICK_WITHDRAWAL,
        ),
        errors=("WITHDRAW_IN_PROGRESS",),
    ),
).views()
