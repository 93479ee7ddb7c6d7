"""Trade offers the bots make, as the platform reports their changes (polled per bot by beat):
each change goes through the trade state machine by the same functions the sandbox's events
use, under the trade's lock, and is marked seen in that transaction, so a change is applied
once however many workers poll."""

import logging

from django.db import transaction

from core import clock
from trading.deposits.services.offers import deposit_offer_sent
from trading.deposits.services.outcomes import deposit_accepted, deposit_ended, deposit_reversed
from trading.models import Status, Trade, TradeEvent, TradeItem
from trading.platform import get_platform
from trading.platform.base import OfferEvent, OfferUpdate, PlatformError, TradeOffer
from trading.trades.offer_keys import offer_owner
from trading.trades.services import trade_lock
from trading.trades.shapes import bot_info_json
from trading.withdrawals.services.lifecycle import (
    withdrawal_items_accepted,
    withdrawal_items_delivered,
    withdrawal_items_ended,
)

logger = logging.getLogger(__name__)

# How an offer that ended without the items moving ends the trade: (status, error).
DEPOSIT_ENDINGS = {
    OfferEvent.DECLINED: (Status.DECLINED, "declined", "OFFER_NOT_ACCEPTED"),
    OfferEvent.COUNTERED: (Status.DECLINED, "countered", "OFFER_NOT_ACCEPTED"),
    OfferEvent.EXPIRED: (Status.DECLINED, "offer_expired", "OFFER_EXPIRED"),
    OfferEvent.CANCELED: (Status.CANCELED, "offer_canceled", ""),
    OfferEvent.INVALID_ITEMS: (Status.FAILED, "invalid_items", "ITEMS_UNAVAILABLE"),
    OfferEvent.FAILED: (Status.FAILED, "platform_failed", "PLATFORM_ERROR"),
}
# A withdrawal's live offer can only be declined or cancelled (decisions section 4).
DELIVERY_ENDINGS = {
    OfferEvent.DECLINED: (Status.DECLINED, "declined", "OFFER_NOT_ACCEPTED"),
    OfferEvent.COUNTERED: (Status.DECLINED, "countered", "OFFER_NOT_ACCEPTED"),
    OfferEvent.EXPIRED: (Status.DECLINED, "offer_expired", "OFFER_EXPIRED"),
    OfferEvent.CANCELED: (Status.CANCELED, "offer_canceled", ""),
    OfferEvent.INVALID_ITEMS: (Status.DECLINED, "invalid_items", "ITEMS_UNAVAILABLE"),
    OfferEvent.FAILED: (Status.DECLINED, "platform_failed", "PLATFORM_ERROR"),
}
ACTOR = "platform"


def offers_poll(*, poller: str) -> int:
    """Ask the platform about one poller's offers (outside any transaction) and apply each
    change. Returns how many changes were applied."""
    platform = get_platform()
    try:
        updates = platform.offer_updates(poller=poller)
    except PlatformError as exc:
        logger.warning("offer poll of %s failed: %s", poller, exc)
        return 0
    return sum(offer_update_apply(update=update) for update in updates)


def offer_update_apply(*, update: OfferUpdate) -> bool:
    """One change, applied under the trade's lock if the trade can still take it; marked seen
    either way (a change the trade can no longer take is recorded in its audit trail)."""
    owner = offer_owner(update.key)
    with transaction.atomic():
        applied = False
        if owner is not None and Trade.objects.filter(pk=owner.trade_id).exists():
            trade, items = trade_lock(trade_id=owner.trade_id)
            if trade.type == Trade.Type.DEPOSIT:
                applied = _deposit_apply(trade, items, update)
            else:
                targets = [i for i in items if i.position in owner.positions]
                applied = _delivery_apply(trade, items, targets, update)
            if not applied:
                _unapplied(trade, update)
        get_platform().offer_update_seen(update=update)
    return applied


def _deposit_apply(trade: Trade, items: list[TradeItem], update: OfferUpdate) -> bool:
    status = trade.status
    if update.event == OfferEvent.SENT:
        if status != Status.PENDING:
            return status == Status.ACTIVE  # sent and recorded by the bot's own step
        deposit_offer_sent(trade=trade, items=items, offer=_offer(update), actor=ACTOR)
        return True
    if update.event in (OfferEvent.ACCEPTED, OfferEvent.ESCROW):
        if status != Status.ACTIVE:
            return status == Status.HOLD
        deposit_accepted(trade=trade, items=items, actor=ACTOR, hold_until=update.hold_until)
        return True
    if update.event == OfferEvent.REVERSED:
        if status != Status.HOLD:
            return status == Status.REVERTED
        deposit_reversed(trade=trade, items=items, actor=ACTOR)
        return True
    to, kind, error = DEPOSIT_ENDINGS[update.event]
    if status not in (Status.PENDING, Status.ACTIVE):
        return False
    deposit_ended(trade=trade, items=items, to=to, actor=ACTOR, kind=kind, error=error)
    return True


def _delivery_apply(
    trade: Trade, items: list[TradeItem], targets: list[TradeItem], update: OfferUpdate
) -> bool:
    def now_in(*statuses: str) -> list[TradeItem]:
        return [i for i in targets if i.status in statuses and i.cancel_requested_at is None]

    if update.event == OfferEvent.SENT:
        pending = now_in(Status.PENDING)
        if pending:
            withdrawal_items_delivered(
                trade=trade,
                items=items,
                targets=pending,
                actor=ACTOR,
                offer_id=update.offer_id,
                bot_info=bot_info_json(update.bot),
            )
        return bool(pending) or all(i.offer_id == update.offer_id for i in targets)
    if update.event in (OfferEvent.ACCEPTED, OfferEvent.ESCROW):
        active = now_in(Status.ACTIVE)
        if active:
            withdrawal_items_accepted(
                trade=trade, items=items, targets=active, actor=ACTOR, hold_until=update.hold_until
            )
        return bool(active)
    if update.event == OfferEvent.REVERSED:
        held = [i for i in targets if i.status == Status.HOLD]
        if held:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=held,
                to=Status.REVERTED,
                actor=ACTOR,
                kind="reversed",
                reverted_by="user",
            )
        return bool(held)
    to, kind, error = DELIVERY_ENDINGS[update.event]
    live = now_in(Status.ACTIVE)
    if live:
        withdrawal_items_ended(
            trade=trade, items=items, targets=live, to=to, actor=ACTOR, kind=kind, error=error
        )
    # The offer ended before it went live (its confirmation refused, an item invalid): it will
    # never carry these items, and no other offer may; they fail and are refunded.
    unsent = [i for i in now_in(Status.PENDING) if i.purchase_ref]
    if unsent:
        withdrawal_items_ended(
            trade=trade,
            items=items,
            targets=unsent,
            to=Status.FAILED,
            actor=ACTOR,
            kind=kind,
            error=error or "PLATFORM_ERROR",
        )
    return bool(live or unsent)


def _offer(update: OfferUpdate) -> TradeOffer:
    return TradeOffer(offer_id=update.offer_id, bot=update.bot, sent=True)


def _unapplied(trade: Trade, update: OfferUpdate) -> None:
    """A change the trade can no longer take (an offer accepted after the service ended its
    trade, say): kept in the audit trail for staff, the trade left as it is."""
    if update.event == OfferEvent.SENT:
        return
    logger.warning("offer %s of trade %s: %s not applied", update.offer_id, trade.id, update.event)
    TradeEvent.objects.create(
        trade=trade,
        kind=f"platform_{update.event}_unapplied",
        from_status=trade.status,
        to_status=trade.status,
        actor=ACTOR,
        detail={"offerId": update.offer_id, "state": update.state},
        created_at=clock.now(),
    )


def offer_pollers() -> list[str]:
    """What the beat polls, one task each (the platform's bots; none in the sandbox)."""
    try:
        return get_platform().pollers()
    except PlatformError as exc:
        logger.warning("no offer pollers: %s", exc)
        return []
