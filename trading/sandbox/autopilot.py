"""``SANDBOX_AUTOPILOT_SECONDS=N``: the sandbox world moves by itself, one step every N seconds
per item (bought items delivered, offers accepted, holds ended), so demos run unattended."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction

from config import clock
from trading.models import Trade, TradeItem
from trading.sandbox.events import WITHDRAW_EVENTS, item_eligible
from trading.services.trades import trade_lock

# In the order the world moves: each step takes the items an earlier step left.
WITHDRAW_STEPS = ("hold_ended", "accepted", "purchased")
BATCH = 100


def sandbox_autopilot_step() -> int:
    """Advance every item idle for N seconds by one step; returns how many moved."""
    seconds = settings.SANDBOX_AUTOPILOT_SECONDS
    if not settings.SANDBOX or seconds <= 0:
        return 0
    idle_since = clock.now() - timedelta(seconds=seconds)
    moved = 0
    for event in WITHDRAW_STEPS:
        source_status, handle = WITHDRAW_EVENTS[event]
        trade_ids = (
            TradeItem.objects.filter(
                trade__type=Trade.Type.WITHDRAW, status=source_status, updated_at__lte=idle_since
            )
            .values_list("trade_id", flat=True)
            .distinct()[:BATCH]
        )
        for trade_id in trade_ids:
            with transaction.atomic():
                trade, items = trade_lock(trade_id=str(trade_id))
                targets = [
                    i
                    for i in items
                    if item_eligible(event, i, source_status) and i.updated_at <= idle_since
                ]
                if targets:
                    handle(trade, items, targets, "autopilot")
                    moved += len(targets)
    return moved
