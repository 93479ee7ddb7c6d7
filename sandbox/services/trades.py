"""``POST /sandbox/trades/{tradeId}/events``: the outside world's moves, on demand."""

from collections.abc import Callable

from django.db import transaction

from core import clock
from core.errors import DomainError
from merchants.models import Merchant
from trading.deposits.services.offers import deposit_offer_send
from trading.deposits.services.outcomes import (
    deposit_accepted,
    deposit_completed,
    deposit_ended,
    deposit_reversed,
)
from trading.models import Status, Trade, TradeItem
from trading.trades.selectors import trade_get
from trading.trades.services import trade_lock
from trading.withdrawals.services.fulfilment import withdrawal_purchase
from trading.withdrawals.services.lifecycle import (
    withdrawal_items_accepted,
    withdrawal_items_completed,
    withdrawal_items_delivered,
    withdrawal_items_ended,
)

Handler = Callable[[Trade, list[TradeItem], list[TradeItem], str], None]


def _ended(to: str, kind: str, error: str = "", reverted_by: str = "") -> Handler:
    def handle(trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str) -> None:
        withdrawal_items_ended(
            trade=trade,
            items=items,
            targets=targets,
            to=to,
            actor=actor,
            kind=kind,
            error=error,
            reverted_by=reverted_by,
        )

    return handle


def _delivered(trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str) -> None:
    """The sandbox's seller sent its trade offer: the sandbox makes up that offer's id, as the
    platform would have given it (ten digits, one per trade and event sequence)."""
    offer_id = f"{int(clock.now().timestamp()) % 10**6:06d}{trade.next_sequence:04d}"
    withdrawal_items_delivered(
        trade=trade, items=items, targets=targets, actor=actor, offer_id=offer_id
    )


def _accepted(trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str) -> None:
    withdrawal_items_accepted(trade=trade, items=items, targets=targets, actor=actor)


def _completed(trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str) -> None:
    withdrawal_items_completed(trade=trade, items=items, targets=targets, actor=actor)


# event -> (the statuses items must be in, what happens to them)
WITHDRAW_EVENTS: dict[str, tuple[frozenset[str], Handler]] = {
    "purchased": (frozenset({Status.PENDING}), _delivered),
    "purchase_failed": (
        frozenset({Status.PENDING}),
        _ended(Status.FAILED, "purchase_failed", "PURCHASE_FAILED"),
    ),
    "accepted": (frozenset({Status.ACTIVE}), _accepted),
    "declined": (
        frozenset({Status.ACTIVE}),
        _ended(Status.DECLINED, "declined", "OFFER_NOT_ACCEPTED"),
    ),
    "hold_ended": (frozenset({Status.HOLD}), _completed),
    "reversed": (frozenset({Status.HOLD}), _ended(Status.REVERTED, "reversed", reverted_by="user")),
}


def _deposit_ended(to: str, kind: str, error: str) -> Handler:
    def handle(trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str) -> None:
        deposit_ended(trade=trade, items=items, to=to, actor=actor, kind=kind, error=error)

    return handle


def _deposit(
    step: Callable[..., None],
) -> Handler:
    def handle(trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str) -> None:
        step(trade=trade, items=items, actor=actor)

    return handle


# The owner's and the platform's moves. A deposit's items move together (one trade offer).
DEPOSIT_EVENTS: dict[str, tuple[frozenset[str], Handler]] = {
    "accepted": (frozenset({Status.ACTIVE}), _deposit(deposit_accepted)),
    "declined": (
        frozenset({Status.ACTIVE}),
        _deposit_ended(Status.DECLINED, "declined", "OFFER_NOT_ACCEPTED"),
    ),
    "hold_ended": (frozenset({Status.HOLD}), _deposit(deposit_completed)),
    "reversed": (frozenset({Status.HOLD}), _deposit(deposit_reversed)),
    "failed": (
        frozenset({Status.INITIATED, Status.PENDING, Status.ACTIVE}),
        _deposit_ended(Status.FAILED, "platform_failed", "PLATFORM_ERROR"),
    ),
}
# The bots' own steps, run now through the platform (as the worker would): for a deposit left
# waiting while the bots were offline. event -> (the status it needs, whether to confirm).
BOT_STEPS = {"offer_created": (Status.INITIATED, False), "offer_sent": (Status.PENDING, True)}


def item_eligible(event: str, item: TradeItem, source_statuses: frozenset[str]) -> bool:
    # The supplier can only deliver what it was asked to buy; an item whose cancel it accepted
    # only waits for the worker to end it.
    return (
        item.status in source_statuses
        and item.cancel_requested_at is None
        and (event != "purchased" or bool(item.purchase_ref))
    )


def sandbox_trade_event(
    *, merchant: Merchant, trade_ref: str, event: str, item_ids: list[str] | None, actor: str
) -> Trade:
    found = trade_get(scope=Trade.objects.filter(merchant=merchant), ref=trade_ref)
    if found is None:
        raise DomainError("TRADE_NOT_FOUND")
    if found.type == Trade.Type.DEPOSIT:
        if item_ids:
            raise DomainError("INVALID_TRANSITION", "A deposit's items move together: no itemIds.")
        if event in BOT_STEPS:
            return _bot_step(found, event)
    elif event == "purchased":
        # The worker places the order after the approval's answer, so a trade can show pending
        # before its order exists. The purchase is keyed by item: placing it here first is the
        # worker's own step, done once whoever comes first, and the supplier can then deliver.
        withdrawal_purchase(trade_id=str(found.id))
    events = WITHDRAW_EVENTS if found.type == Trade.Type.WITHDRAW else DEPOSIT_EVENTS
    if event not in events:
        raise DomainError("INVALID_TRANSITION", f"{event} does not apply to a {found.type}.")
    source_statuses, handle = events[event]
    with transaction.atomic():
        trade, items = trade_lock(trade_id=str(found.id))
        chosen = items
        if item_ids:
            known = {i.public_id for i in items} | {i.external_id for i in items if i.external_id}
            missing = [ref for ref in item_ids if ref not in known]
            if missing:
                raise DomainError("ITEM_NOT_FOUND", f"No item {', '.join(missing)} in this trade.")
            chosen = [i for i in items if i.public_id in item_ids or i.external_id in item_ids]
        targets = [i for i in chosen if item_eligible(event, i, source_statuses)]
        if not targets or (trade.type == Trade.Type.DEPOSIT and len(targets) != len(items)):
            raise DomainError("INVALID_TRANSITION", f"No item of this trade can take {event} now.")
        handle(trade, items, targets, actor)
    trade.refresh_from_db()
    return trade


def _bot_step(trade: Trade, event: str) -> Trade:
    needed, confirm = BOT_STEPS[event]
    if trade.status != needed:
        raise DomainError(
            "INVALID_TRANSITION", f"The deposit is {trade.status}; {event} needs {needed}."
        )
    deposit_offer_send(trade_id=str(trade.id), confirm=confirm)
    trade.refresh_from_db()
    if trade.status == needed:
        raise DomainError("PLATFORM_UNAVAILABLE", "The bots cannot make this step now; retry.")
    return trade
