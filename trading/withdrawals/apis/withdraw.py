"""Withdrawals: ``POST /secure/buy`` and ``POST /client/trading/withdraw``, and their quick
variants ``POST /secure/buy/quick`` and ``POST /client/trading/withdraw/quick``."""

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.docs import OperationDoc, paragraphs
from merchants.authentication import ClientCaller
from merchants.selectors import client_get
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from trading.games import CS_GAME
from trading.models import Trade
from trading.trades.shapes import TradeOut, trade_json
from trading.withdrawals import examples
from trading.withdrawals.inputs import (
    ClientWithdrawIn,
    QuickWithdrawIn,
    SecureBuyIn,
    SecureQuickBuyIn,
)
from trading.withdrawals.services.create import Recipient, WithdrawItemIn, withdrawal_create
from trading.withdrawals.services.quick import quick_withdrawal_create


class RecipientApi(CallerApiView):
    """A purchase for a recipient: the body's ``tradeUrl`` on a merchant route (a self trade),
    the token's own account on a client route."""

    source: ClassVar[str]

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        raise NotImplementedError


def client_recipient(caller: ClientCaller) -> Recipient:
    """The token's own account receives; its client row serializes its withdrawals."""
    return Recipient(
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


class WithdrawApi(RecipientApi):
    """Listings bought for a recipient: ``POST /secure/buy`` and ``POST
    /client/trading/withdraw``."""

    errors: ClassVar[tuple[str, ...]] = (
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

    def auto_cancel_minutes(self, body: dict[str, Any]) -> int | None:
        """Minutes after which the withdrawal's items still pending are cancelled; None: never.
        The body's ``autoCancel`` (game 730 only, its serializer's rule)."""
        minutes: int | None = body.get("autoCancel")
        return minutes

    @extend_schema(tags=["withdrawals"], responses=TradeOut)
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        trade = withdrawal_create(
            merchant=self.merchant(request),
            source=self.source,
            recipient=self.recipient(request, body),
            items=[
                WithdrawItemIn(
                    item_id=entry["itemId"],
                    price=entry["price"],
                    external_id=entry.get("externalId", ""),
                    amount=entry["amount"],
                )
                for entry in body["items"]
            ],
            game=body["game"],
            external_id=body.get("externalId", ""),
            auto_cancel_minutes=self.auto_cancel_minutes(body),
            slippage_bps=body.get("slippageBps"),
        )
        return Response(trade_json(trade))


class SecureBuyApi(MerchantApiView, WithdrawApi):
    operation = "secure.buy"
    operation_id = "secureBuy"
    body_serializer = SecureBuyIn
    source = Trade.Source.SELF
    doc = OperationDoc(
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
    )

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return Recipient(trade_url=body["tradeUrl"])


class ClientWithdrawApi(ClientApiView, WithdrawApi):
    operation = "client.trading.withdraw"
    operation_id = "clientWithdraw"
    body_serializer = ClientWithdrawIn
    source = Trade.Source.CLIENT
    doc = OperationDoc(
        summary="Buy listings for the client (withdrawal)",
        description=paragraphs(
            WITHDRAW.format(route="/client", recipient="the client's own account"),
            """
            One withdrawal per client at a time is written: a second one at the same moment is
            refused with `WITHDRAW_IN_PROGRESS` (retry). Your approval callback is where you
            check and deduct the client's balance on your side.

            `autoCancel` (game 730 only; 30 to 720 minutes, 30 when not given) cancels the items
            still being bought that long after creation (`autoCancelAt`).
            """,
            EXTERNAL_ID,
            WITHDRAWAL_LIFECYCLE.format(lookup="/client/trades/{id}"),
        ),
        request=examples.CLIENT_WITHDRAW_REQUEST,
        response=examples.CLIENT_WITHDRAWAL,
        error_details=examples.WITHDRAW_ERROR_DETAILS,
    )
    # One withdrawal per user at a time.
    errors = (*WithdrawApi.errors, "WITHDRAW_IN_PROGRESS")

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return client_recipient(self.caller(request))

    def auto_cancel_minutes(self, body: dict[str, Any]) -> int | None:
        """Game 730 only: the client's ``autoCancel``, 30 minutes when not given."""
        return body.get("autoCancel", 30) if body["game"] == CS_GAME else None


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


class QuickWithdrawApi(RecipientApi):
    """The cheapest listings of one item up to a price, bought for a recipient: ``POST
    /secure/buy/quick`` and ``POST /client/trading/withdraw/quick``."""

    errors: ClassVar[tuple[str, ...]] = (
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
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        trade = quick_withdrawal_create(
            merchant=self.merchant(request),
            source=self.source,
            recipient=self.recipient(request, body),
            item_id=body.get("itemId"),
            market_hash_name=body.get("marketHashName"),
            max_price=body["maxPrice"],
            amount=body["amount"],
            delivery=body["delivery"],
            phase=body.get("phase", ""),
            game=body["game"],
            external_id=body.get("externalId", ""),
            external_ids=body.get("externalIds", []),
        )
        return Response(trade_json(trade))


class SecureQuickBuyApi(MerchantApiView, QuickWithdrawApi):
    operation = "secure.buy.quick"
    operation_id = "secureQuickBuy"
    body_serializer = SecureQuickBuyIn
    source = Trade.Source.SELF
    doc = OperationDoc(
        summary="Buy the cheapest listings of an item for a trade URL (quick self withdrawal)",
        description=paragraphs(
            QUICK_WITHDRAW.format(recipient="the account behind `tradeUrl` (a self trade)"),
            EXTERNAL_ID,
            WITHDRAWAL_LIFECYCLE.format(lookup="/secure/trades/{tradeId}"),
        ),
        request=examples.SECURE_QUICK_BUY_REQUEST,
        response=examples.SELF_QUICK_BUY,
    )

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return Recipient(trade_url=body["tradeUrl"])


class ClientQuickWithdrawApi(ClientApiView, QuickWithdrawApi):
    operation = "client.trading.withdraw.quick"
    operation_id = "clientQuickWithdraw"
    body_serializer = QuickWithdrawIn
    source = Trade.Source.CLIENT
    doc = OperationDoc(
        summary="Buy the cheapest listings of an item for the client (quick withdrawal)",
        description=paragraphs(
            QUICK_WITHDRAW.format(recipient="the client's own account"),
            """
            One withdrawal per client at a time is written: a second one at the same moment is
            refused with `WITHDRAW_IN_PROGRESS` (retry).
            """,
            EXTERNAL_ID,
            WITHDRAWAL_LIFECYCLE.format(lookup="/client/trades/{id}"),
        ),
        request=examples.QUICK_WITHDRAW_REQUEST,
        response=examples.QUICK_WITHDRAWAL,
    )
    errors = (*QuickWithdrawApi.errors, "WITHDRAW_IN_PROGRESS")

    def recipient(self, request: Request, body: dict[str, Any]) -> Recipient:
        return client_recipient(self.caller(request))
