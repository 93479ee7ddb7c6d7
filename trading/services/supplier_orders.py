"""A bought trade's news from its supplier applied to its withdrawal item, once: the order and
the item move in one transaction, under the order's and the trade's locks. A trade offer to the
recipient goes live only under the id the supplier reports for it; an item the supplier holds
for us (DMarket's own inventory) is withdrawn to our bot (``supplier_withdraws``)."""

from datetime import timedelta

from django.db import transaction

from core import clock
from trading.marketplace.suppliers.base import SupplierTrade, TradeState
from trading.models import Status, SupplierOrder, Trade, TradeItem
from trading.services.supplier_withdraws import supplier_withdraw_expect, supplier_withdraw_left
from trading.trades.services import trade_lock
from trading.withdrawals.services.handover import bot_delivery_arrived, bot_delivery_ended
from trading.withdrawals.services.lifecycle import (
    withdrawal_items_accepted,
    withdrawal_items_delivered,
    withdrawal_items_ended,
)

WAITING_RECHECK = timedelta(seconds=30)
SENT_RECHECK = timedelta(seconds=60)


def supplier_order_apply(*, order: SupplierOrder, trade: SupplierTrade) -> int:
    """Apply the supplier's word on one order; returns how many items moved."""
    item_pk = int(order.key.removeprefix("ti-"))
    trade_id = TradeItem.objects.filter(pk=item_pk).values_list("trade_id", flat=True).first()
    if trade_id is None:
        return 0
    now = clock.now()
    actor = f"supplier:{order.supplier_id}"
    state = trade.state
    with transaction.atomic():
        current = SupplierOrder.objects.select_for_update().get(pk=order.pk)
        if current.state not in (SupplierOrder.State.BOUGHT, SupplierOrder.State.SENT):
            return 0
        locked, items = trade_lock(trade_id=str(trade_id))
        item = next(i for i in items if i.pk == item_pk)
        to_recipient = not current.listing.get("bot_platform_id")
        if item.status == Status.PENDING and item.purchase_ref != current.reference:
            # The purchase is not recorded on the item yet: the purchase sweep records it.
            current.next_check_at = now + WAITING_RECHECK
            current.save(update_fields=["next_check_at"])
            return 0
        if (
            to_recipient
            and item.status == Status.PENDING
            and state in (TradeState.SENT, TradeState.DELIVERED)
            and not trade.offer_id
        ):
            # Sent, but the supplier names no trade offer yet: the merchant's offerID is the
            # offer's real id, so the item goes live when the supplier reports it.
            current.next_check_at = now + WAITING_RECHECK
            current.save(update_fields=["next_check_at"])
            return 0
        moved = 0
        if state is TradeState.WAITING:
            if trade.held and trade.withdrawable:
                supplier_withdraw_expect(order=current, class_ref=trade.class_ref)
            current.next_check_at = now + WAITING_RECHECK
        elif not to_recipient and state is not TradeState.CANCELED:
            moved = _to_our_bot(current, item, state)
        elif state is TradeState.SENT:
            if item.status == Status.PENDING:
                withdrawal_items_delivered(
                    trade=locked, items=items, targets=[item], actor=actor, offer_id=trade.offer_id
                )
                moved = 1
            current.state, current.next_check_at = SupplierOrder.State.SENT, now + SENT_RECHECK
        elif state is TradeState.DELIVERED:
            if item.status == Status.PENDING:
                withdrawal_items_delivered(
                    trade=locked, items=items, targets=[item], actor=actor, offer_id=trade.offer_id
                )
            if item.status == Status.ACTIVE:
                withdrawal_items_accepted(trade=locked, items=items, targets=[item], actor=actor)
                moved = 1
            current.state, current.next_check_at = SupplierOrder.State.DELIVERED, None
        else:
            moved = _canceled(locked, items, item, actor)
            current.state, current.next_check_at = SupplierOrder.State.CANCELED, None
            current.reason = trade.reason[:200]
            bot_delivery_ended(item_pk=item.pk, reason=f"{current.supplier_id} cancelled")
        current.updated_at = now
        current.save()
    return moved


def _to_our_bot(order: SupplierOrder, item: TradeItem, state: TradeState) -> int:
    """A supplier that delivers to our bot (DMarket): its trade offer on the way is the item
    coming to us, not to the recipient (the item stays ``pending``, and the recipient's offer
    is our bot's, under the id Steam gives it); arrived, the item is the bot's to hand over
    (``BotDelivery``), and the supplier has nothing more to tell."""
    supplier_withdraw_left(order=order)
    if state is TradeState.SENT:
        order.state, order.next_check_at = SupplierOrder.State.SENT, clock.now() + SENT_RECHECK
        return 0
    order.state, order.next_check_at = SupplierOrder.State.AT_BOT, None
    bot_delivery_arrived(item_pk=item.pk)
    return 1


def _canceled(trade: Trade, items: list[TradeItem], item: TradeItem, actor: str) -> int:
    """The supplier cancelled (before sending: the purchase failed; after: not delivered):
    the item ends and its lock goes back to the merchant, once."""
    ends = {
        Status.PENDING: (Status.FAILED, "PURCHASE_FAILED"),
        Status.ACTIVE: (Status.DECLINED, "OFFER_NOT_ACCEPTED"),
    }
    if item.status not in ends:
        return 0
    to, error = ends[Status(item.status)]
    withdrawal_items_ended(
        trade=trade,
        items=items,
        targets=[item],
        to=to,
        actor=actor,
        kind="supplier_canceled",
        error=error,
    )
    return 1
