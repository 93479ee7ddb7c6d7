"""Cancels of withdrawal items: whole trades and single items, for merchants and clients."""

from dataclasses import dataclass

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc, paragraphs
from merchants.authentication import ClientCaller, MerchantCaller
from merchants.ratelimits import SECURE_CANCEL, Limited
from merchants.views import CallerApiView, Operation, Route
from trading.models import Trade, TradeItem
from trading.trades.selectors import client_trade_scope
from trading.withdrawals import examples
from trading.withdrawals.services.cancels import (
    CancelRow,
    TradeCancel,
    withdrawal_cancel,
    withdrawal_item_cancel,
)
from trading.withdrawals.shapes import CancelResult, CancelResultRow, ItemCancelResult

TRADE_ID = OpenApiParameter("tradeId", str, OpenApiParameter.PATH, description="id or externalId")
ITEM_ID = OpenApiParameter("itemId", str, OpenApiParameter.PATH, description="id or externalId")


@dataclass(frozen=True)
class Canceller:
    """Who cancels: the trades in reach (``scope``), whether only self trades are theirs to
    cancel (``self_only``: another one is found, and answers FORBIDDEN), and the ``actor``."""

    scope: QuerySet[Trade]
    self_only: bool
    actor: str


def canceller(caller: MerchantCaller | ClientCaller) -> Canceller:
    """A merchant cancels its self trades; a client its own trades."""
    if isinstance(caller, MerchantCaller):
        return Canceller(Trade.objects.filter(merchant=caller.merchant), True, "merchant")
    scope = client_trade_scope(merchant=caller.merchant, platform_id=caller.platform_id)
    return Canceller(scope, False, "client")


# The answers, built from what the cancel services return.
def cancel_row_json(row: CancelRow) -> CancelResultRow:
    body: CancelResultRow = {
        "itemId": row.item.public_id,
        "status": "cancelled" if row.accepted else "failed",
    }
    if row.item.external_id:
        body["externalId"] = row.item.external_id
    if row.reason:
        body["reason"] = row.reason
    return body


def cancel_result_json(cancel: TradeCancel) -> CancelResult:
    rows = cancel.rows
    return {
        "tradeId": str(cancel.trade.id),
        "requested": len(rows),
        "cancelled": sum(row.accepted for row in rows),
        "failed": sum(not row.accepted for row in rows),
        "items": [cancel_row_json(row) for row in rows],
    }


def item_cancel_json(trade: Trade, item: TradeItem) -> ItemCancelResult:
    body: ItemCancelResult = {
        "tradeId": str(trade.id),
        "itemId": item.public_id,
        "status": "cancelled",
    }
    if item.external_id:
        body["externalId"] = item.external_id
    return body


CANCEL_RULES = """
    Only items of game 730 bought from a supplier can be cancelled (the service's own stock and
    game 252490 have no cancel), once the trade is 30 minutes old and while the item is still
    being bought or offered (`pending` or `active`); delivered items and items in their hold
    are out of reach. Items not yet ordered are cancelled at once; ordered ones need the
    marketplace's acceptance.

    A `cancelled` answer only confirms that the cancel was accepted: the item becomes
    `canceled` moments later, refunded, reported by the `trade.canceled` or `trade.updated`
    webhook. Poll `GET {lookup}` for the final state.
"""

WHOLE_TRADE = """
    Asks to cancel every still-cancellable item of {whose} withdrawal, by its `id` or
    `externalId`. The answer is 200 even when only some items could be cancelled: read it.
    `requested` counts the items the marketplace considered, `cancelled` and `failed` split
    them, and each row gives the item's `id`, its `externalId` and, when it failed, the
    `reason` (a stable key such as `TRADE_CANCEL_TOO_SOON` or `TRADE_NOT_CANCELLABLE`). Items
    that cannot be cancelled at all are left out; when that is every item, the answer is
    `TRADE_CANCEL_UNSUPPORTED`.
"""

ONE_ITEM = """
    Asks to cancel one item of {whose} withdrawal: the trade by its `id` or `externalId`, the
    item by its `id` or its `externalId`. Unlike the whole-trade cancel, a refusal is an error:
    `TRADE_CANCEL_TOO_SOON` (the trade is younger than 30 minutes), `TRADE_NOT_CANCELLABLE`
    (delivered, finished, or refused by the marketplace), `TRADE_CANCEL_UNSUPPORTED` (own stock
    or game 252490), `ITEM_NOT_FOUND` (no such trade or item).
"""


CANCEL_ERRORS = (
    "TRADE_NOT_CANCELLABLE",
    "TRADE_CANCEL_UNSUPPORTED",
    "ITEM_NOT_FOUND",
    "TRANSACTION_CONFLICT",
)


SELF_ONLY = """
    Only your self trades (`source: self`) are yours to cancel here: a client's withdrawal
    answers `FORBIDDEN`; cancel it with the client's token.
"""


@extend_schema(tags=["cancels"], parameters=[TRADE_ID], responses=CancelResult)
def cancel(self: CallerApiView, request: Request, tradeId: str) -> Response:  # noqa: N803
    by = canceller(self.caller(request))
    cancel = withdrawal_cancel(
        scope=by.scope, trade_ref=tradeId, self_only=by.self_only, actor=by.actor
    )
    return Response(cancel_result_json(cancel))


SecureBuyCancelApi, ClientWithdrawCancelApi = Operation(
    method="post",
    handler=cancel,
    errors=CANCEL_ERRORS,
    secure=Route(
        operation_id="secureBuyCancel",
        rate_limit=Limited("secure.buy.cancel", SECURE_CANCEL),
        errors=("FORBIDDEN",),
        doc=OperationDoc(
            summary="Cancel a self withdrawal's undelivered items",
            description=paragraphs(
                WHOLE_TRADE.format(whose="a self"),
                SELF_ONLY,
                CANCEL_RULES.format(lookup="/secure/trades/{tradeId}"),
            ),
            parameters={"tradeId": examples.SELF_BUY["id"]},
            response=examples.SELF_TRADE_CANCEL,
        ),
    ),
    client=Route(
        operation_id="clientWithdrawCancel",
        rate_limit=Limited(
            "client.trading.withdraw.cancel", SECURE_CANCEL, shared="client.trading.cancel"
        ),
        doc=OperationDoc(
            summary="Cancel a client withdrawal's undelivered items",
            description=paragraphs(
                WHOLE_TRADE.format(whose="the client's"),
                CANCEL_RULES.format(lookup="/client/trades/{id}"),
            ),
            parameters={"tradeId": examples.CLIENT_WITHDRAWAL["externalId"]},
            response=examples.CLIENT_TRADE_CANCEL,
        ),
    ),
).views()


@extend_schema(tags=["cancels"], parameters=[TRADE_ID, ITEM_ID], responses=ItemCancelResult)
def item_cancel(self: CallerApiView, request: Request, tradeId: str, itemId: str) -> Response:  # noqa: N803
    by = canceller(self.caller(request))
    trade, item = withdrawal_item_cancel(
        scope=by.scope, trade_ref=tradeId, item_ref=itemId, self_only=by.self_only, actor=by.actor
    )
    return Response(item_cancel_json(trade, item))


SecureBuyItemCancelApi, ClientWithdrawItemCancelApi = Operation(
    method="post",
    handler=item_cancel,
    errors=(*CANCEL_ERRORS, "TRADE_CANCEL_TOO_SOON"),
    secure=Route(
        operation_id="secureBuyItemCancel",
        rate_limit=Limited("secure.buy.item_cancel", SECURE_CANCEL, shared="secure.buy.cancel"),
        errors=("FORBIDDEN",),
        doc=OperationDoc(
            summary="Cancel one item of a self withdrawal",
            description=paragraphs(
                ONE_ITEM.format(whose="a self"),
                SELF_ONLY,
                CANCEL_RULES.format(lookup="/secure/trades/{tradeId}"),
            ),
            parameters={"tradeId": examples.SELF_BUY["externalId"], "itemId": "line-1"},
            response=examples.SELF_ITEM_CANCEL,
        ),
    ),
    client=Route(
        operation_id="clientWithdrawItemCancel",
        rate_limit=Limited(
            "client.trading.withdraw.item_cancel", SECURE_CANCEL, shared="client.trading.cancel"
        ),
        doc=OperationDoc(
            summary="Cancel one item of a client withdrawal",
            description=paragraphs(
                ONE_ITEM.format(whose="the client's"),
                CANCEL_RULES.format(lookup="/client/trades/{id}"),
            ),
            parameters={
                "tradeId": examples.CLIENT_WITHDRAWAL["id"],
                "itemId": "4612c31f-49b3-495e-9f91-fde507791596",
            },
            response=examples.CLIENT_ITEM_CANCEL,
        ),
    ),
).views()
