"""A withdrawal's items after creation, each move through the trade state machine with its money:
the approval's outcome, offered, accepted into the hold, completed (the lock settles), or ended
without delivery (refunded); staff's force cancel."""

from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction

from core import clock
from core.errors import DomainError
from core.handoffs import Handoff, handoff_on_commit
from core.services import staff_action_record
from core.staff import Staff
from merchants.webhooks.outbox import Approval
from trading.accounts.selectors.inventory import inventory_cache_forget
from trading.models import CatalogItem, Status, Trade, TradeItem
from trading.selectors.switches import game_settings_get
from trading.trades.channels import trade_events_publish
from trading.trades.services import Move, trade_apply, trade_lock
from trading.trades.shapes import BotInfoOut, catalog_details
from wallet.services import wallet_release, wallet_settle_purchase

# The purchase of an approved withdrawal's listings.
PURCHASE = Handoff("trading.withdrawal_purchase")


def refund_item(trade: Trade, item: TradeItem, kind: str = "REFUND") -> None:
    if item.locked > 0:
        wallet_release(
            merchant=trade.merchant,
            amount=item.locked,
            cause_type="trade_item",
            cause_id=str(item.pk),
            kind=kind,
        )
        item.locked = Decimal("0.00")


def withdrawal_approval_resume(trade_id: str) -> None:
    """The purchase an approval started, handed on again: it buys only what is not yet
    bought (keyed by item), and nothing for a trade the answer failed."""
    handoff_on_commit(PURCHASE, trade_id)


def withdrawal_approval_resolve(trade_id: str, outcome: str, reason: str) -> None:
    """The merchant's answer to the approval callback (runs in the delivery's transaction)."""
    trade, items = trade_lock(trade_id=trade_id)
    if trade.status != Status.INITIATED:
        return
    if outcome == Approval.APPROVED:
        catalog = CatalogItem.objects.in_bulk({item.catalog_id for item in items})
        change = trade_apply(
            trade=trade,
            items=items,
            actor="merchant",
            kind="approved",
            moves=[
                Move(
                    item, Status.PENDING, {"details": catalog_details(catalog.get(item.catalog_id))}
                )
                for item in items
            ],
        )
        trade_events_publish(change)
        handoff_on_commit(PURCHASE, str(trade.id))
        return
    error = "MERCHANT_REJECTED" if outcome == Approval.REJECTED else "APPROVAL_TIMEOUT"
    for item in items:
        refund_item(trade, item)
    change = trade_apply(
        trade=trade,
        items=items,
        actor="merchant",
        kind=error.lower(),
        moves=[Move(item, Status.FAILED, {"error": error}) for item in items],
        trade_fields={"error": error},
        detail={"reason": reason} if reason else None,
    )
    trade_events_publish(change)


def withdrawal_items_delivered(
    *,
    trade: Trade,
    items: list[TradeItem],
    targets: list[TradeItem],
    actor: str,
    offer_id: str,
    bot_info: BotInfoOut | None = None,
) -> None:
    """Bought items offered to the recipient: the trade offer is live. ``offer_id`` is that
    offer's id as the platform gave it to whoever sent it (our bot, ``bot_info``, or a
    supplier's seller, as the supplier reports it): the merchant's ``offerID``, never made up."""
    if not offer_id:
        raise ValueError("a delivered item needs the trade offer's id")
    now = clock.now()
    extra = {"bot_info": bot_info} if bot_info else {}
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="purchased",
        moves=[
            Move(item, Status.ACTIVE, {"offer_id": offer_id, "active_at": now}) for item in targets
        ],
        trade_fields={"offer_id": offer_id, "active_at": trade.active_at or now, **extra},
    )
    trade_events_publish(change)


def withdrawal_items_accepted(
    *,
    trade: Trade,
    items: list[TradeItem],
    targets: list[TradeItem],
    actor: str,
    hold_until: datetime | None = None,
) -> None:
    """The recipient accepted: the items are in its inventory, held for the game's protection
    window, or until the platform's own hold (``hold_until``, escrow) ends if that is later."""
    hold_end = clock.now() + timedelta(days=game_settings_get(game=trade.game).hold_days)
    hold_end = max(hold_end, hold_until) if hold_until else hold_end
    merchant, recipient = trade.merchant, trade.client_platform_id
    transaction.on_commit(lambda: inventory_cache_forget(merchant=merchant, platform_id=recipient))
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="accepted",
        moves=[Move(item, Status.HOLD, {"hold_end_date": hold_end}) for item in targets],
        trade_fields={"hold_end_date": hold_end},
    )
    trade_events_publish(change)


def withdrawal_items_completed(
    *, trade: Trade, items: list[TradeItem], targets: list[TradeItem], actor: str
) -> None:
    """The protection window is over: the lock settles to the supplier and revenue."""
    for item in targets:
        assert item.sourcing_price is not None
        if item.locked > 0:
            wallet_settle_purchase(
                merchant=trade.merchant,
                gross=item.locked,
                sourcing=item.sourcing_price * item.amount,
                cause_type="trade_item",
                cause_id=str(item.pk),
            )
            item.locked = Decimal("0.00")
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="hold_ended",
        moves=[Move(item, Status.COMPLETED) for item in targets],
    )
    trade_events_publish(change)


def withdrawal_items_ended(
    *,
    trade: Trade,
    items: list[TradeItem],
    targets: list[TradeItem],
    to: str,
    actor: str,
    kind: str,
    error: str = "",
    reverted_by: str = "",
) -> None:
    """Items that end without delivery (failed, declined, canceled, reverted): refunded."""
    for item in targets:
        refund_item(trade, item)
    fields = {"error": error} if error else {}
    # The trade carries the shared failure cause too, as a failed purchase's does.
    trade_fields = {**fields, **({"reverted_by": reverted_by} if reverted_by else {})}
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind=kind,
        moves=[Move(item, to, dict(fields)) for item in targets],
        trade_fields=trade_fields or None,
    )
    trade_events_publish(change)


def trade_force_cancel(*, trade_id: str, staff: Staff) -> int:
    """Staff stop a withdrawal: undelivered items end now with a refund (initiated ones fail,
    bought ones are canceled); delivered items are left alone. Returns how many ended."""
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        if trade.type != Trade.Type.WITHDRAW:
            raise DomainError("TRADE_NOT_CANCELLABLE", "Only withdrawals can be force-cancelled.")
        initiated = [i for i in items if i.status == Status.INITIATED]
        bought = [i for i in items if i.status in (Status.PENDING, Status.ACTIVE)]
        if not initiated and not bought:
            raise DomainError(
                "TRADE_NOT_CANCELLABLE",
                f"Nothing is left to cancel: the trade is {trade.status}.",
                details={"status": trade.status},
            )
        # First, so the trade's timeline reads the decision before what it did.
        staff_action_record(
            staff=staff,
            action="cancel_trade",
            subject_type="trade",
            subject_id=str(trade.pk),
            failed=len(initiated),
            canceled=len(bought),
        )
        if initiated:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=initiated,
                to=Status.FAILED,
                actor=staff.actor,
                kind="force_cancel",
                error="CANCELED_BY_STAFF",
            )
        if bought:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=bought,
                to=Status.CANCELED,
                actor=staff.actor,
                kind="force_cancel",
            )
    return len(initiated) + len(bought)
