"""``SANDBOX_AUTOPILOT_SECONDS=N``: the sandbox world moves by itself, one step every N seconds
per item (bought items delivered, offers accepted, holds ended, for withdrawals and deposits), so
demos run unattended."""

import random
import uuid
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from core import clock
from core.db import row_upsert
from core.market_version import market_version_bump
from merchants.models import Merchant
from sandbox.marketplace import listing_from_snapshot, listing_of, listing_snapshot
from sandbox.models import SandboxAutopilotState, SandboxListing
from sandbox.services.trades import DEPOSIT_EVENTS, WITHDRAW_EVENTS, Handler, item_eligible
from trading.games import CS_GAME
from trading.market.services import market_listings_changed
from trading.marketplace.base import Listing
from trading.models import CatalogItem, Trade, TradeItem
from trading.trades.services import trade_lock

# In the order the world moves: each step takes the items an earlier step left. The bots' own
# steps (making and sending a deposit's offer) are the worker's, not the world's.
STEPS: tuple[tuple[str, str, dict[str, tuple[frozenset[str], Handler]]], ...] = (
    (Trade.Type.WITHDRAW, "hold_ended", WITHDRAW_EVENTS),
    (Trade.Type.WITHDRAW, "accepted", WITHDRAW_EVENTS),
    (Trade.Type.WITHDRAW, "purchased", WITHDRAW_EVENTS),
    (Trade.Type.DEPOSIT, "hold_ended", DEPOSIT_EVENTS),
    (Trade.Type.DEPOSIT, "accepted", DEPOSIT_EVENTS),
)
BATCH = 100


def sandbox_autopilot_step() -> int:
    """Advance every item idle for N seconds by one step (but the items of merchants that turned
    the autopilot off) and stir the market; returns how many items and listings moved."""
    seconds = settings.SANDBOX_AUTOPILOT_SECONDS
    if seconds <= 0:
        return 0
    idle_since = clock.now() - timedelta(seconds=seconds)
    by_hand = SandboxAutopilotState.objects.filter(enabled=False).values("merchant_id")
    moved = sandbox_market_churn()
    for trade_type, event, events in STEPS:
        source_statuses, handle = events[event]
        trade_ids = (
            TradeItem.objects.filter(
                trade__type=trade_type, status__in=source_statuses, updated_at__lte=idle_since
            )
            .exclude(trade__merchant_id__in=by_hand)
            .values_list("trade_id", flat=True)
            .distinct()[:BATCH]
        )
        for trade_id in trade_ids:
            with transaction.atomic():
                trade, items = trade_lock(trade_id=str(trade_id))
                targets = [
                    i
                    for i in items
                    if item_eligible(event, i, source_statuses) and i.updated_at <= idle_since
                ]
                # A deposit's items move together.
                whole = trade_type == Trade.Type.WITHDRAW or len(targets) == len(items)
                if targets and whole:
                    handle(trade, items, targets, "autopilot")
                    moved += len(targets)
    return moved


CHURN_ITEMS = 3


def sandbox_market_churn(*, rng: random.Random | None = None) -> int:
    """The supplier market does not hold still: a few items get a listing repriced (up to 5 %
    either way) and another one withdrawn, and a new one listed in its place, so PRICE_CHANGED
    and LISTING_UNAVAILABLE happen to integrations as they do in production, and the feed's
    market subscribers see listings appear, change price and go. Returns how many listings
    changed."""
    rng = rng or random.Random()  # noqa: S311 (sandbox world, not security)
    appeared: list[Listing] = []
    repriced: list[Listing] = []
    gone: list[Listing] = []
    with transaction.atomic():
        for item_id in CatalogItem.objects.order_by("?").values_list("id", flat=True)[:CHURN_ITEMS]:
            listings = list(
                SandboxListing.objects.select_related("bot")
                .filter(item_id=item_id)
                .order_by("price")[:2]
            )
            if listings:
                listings[0].price = _moved(listings[0].price, rng)
                listings[0].save(update_fields=["price"])
                repriced.append(listing_of(listings[0]))
            if len(listings) > 1:
                withdrawn = listings[1]
                gone.append(listing_of(withdrawn))
                appeared.append(listing_of(_relisted(withdrawn, rng)))
                withdrawn.delete()
        if repriced:
            market_listings_changed(appeared=appeared, repriced=repriced, gone=gone)
            transaction.on_commit(market_version_bump)
    return len(appeared) + len(repriced) + len(gone)


def _moved(price: Decimal, rng: random.Random) -> Decimal:
    factor = Decimal(1) + Decimal(rng.randint(-5, 5)) / 100
    return max(Decimal("0.01"), (price * factor).quantize(Decimal("0.01")))


def _relisted(withdrawn: SandboxListing, rng: random.Random) -> SandboxListing:
    """Another seller lists the same kind of item under a new id, at a price near the old."""
    fields = listing_snapshot(withdrawn)
    if withdrawn.game == CS_GAME:
        fields["id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    else:
        fields["id"] = f"{withdrawn.item_id}-{rng.randrange(10**8):08d}"
    fields["price"] = str(_moved(withdrawn.price, rng))
    listing = listing_from_snapshot(fields)
    listing.save(force_insert=True)
    return listing


def sandbox_autopilot_set(*, merchant: Merchant, enabled: bool) -> None:
    """Let the autopilot move the merchant's trades and chain transactions, or leave them to the
    ``/sandbox/`` helpers; every other merchant keeps its own setting."""
    row_upsert(SandboxAutopilotState, keys={"merchant": merchant}, values={"enabled": enabled})
