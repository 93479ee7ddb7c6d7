"""Withdrawal deliveries sent by the service's bots: items of the bots' own stock, and items a
supplier delivered to our bot (DMarket), offered to the recipient by the bot holding them,
confirmed, and live (``active``). Acceptance, holds, declines, expiries and reversals then come
from the platform's offer changes (``services.offers``), as the sandbox's events do.

Each item's ``BotDelivery`` row is moved on by beat (``trading.sweep_deliveries``) and by the
hand-off its purchase makes: an attempt claims the due rows by moving ``next_attempt_at`` with
a compare-and-set update, so two workers never attempt one row at once, and a worker that dies
mid-attempt leaves its rows due again when the claim runs out. An item belongs to one offer
key from its first attempt on (``offer_key``); the platform sends a key's offer once (it looks
for an offer a lost answer may hide before sending again), so an item is never in two offers.
A refusal fails the items (refunded); a transient failure tries again later, backing off."""

import logging
from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import F, Q

from core import clock
from trading.models import BotDelivery, Status, Trade, TradeItem
from trading.platform import get_platform
from trading.platform.base import (
    InventoryAsset,
    OfferAsset,
    OfferRefusedError,
    PlatformError,
    TradeOffer,
)
from trading.trades.offer_keys import delivery_offer_key
from trading.trades.services import trade_lock
from trading.trades.shapes import bot_info_json
from trading.withdrawals.services.handover import ARRIVAL_LOOK_EVERY
from trading.withdrawals.services.lifecycle import (
    withdrawal_items_delivered,
    withdrawal_items_ended,
)

logger = logging.getLogger(__name__)

# An attempt's hold on its rows: longer than any attempt takes (a send's timeout and one
# confirmation), so only a dead worker's rows come due again while claimed.
CLAIM = timedelta(minutes=2)
FIRST_RETRY = timedelta(seconds=30)
LAST_RETRY = timedelta(minutes=30)
# An item the bot holds but may not trade yet (CS2 trade protection after a supplier's trade
# to us): looked at again this often until it can be offered.
NOT_TRADABLE_YET = timedelta(hours=1)
# Floats told by a supplier and read from Steam agree this closely (they round differently).
WEAR_TOLERANCE = Decimal("0.000001")
BATCH = 200


def withdrawal_deliveries_due() -> list[str]:
    """Trades with deliveries due now (the partial index holds only waiting rows)."""
    rows = (
        BotDelivery.objects.filter(
            state=BotDelivery.State.WAITING, next_attempt_at__lte=clock.now()
        )
        .order_by("next_attempt_at")
        .values_list("trade_id", flat=True)[:BATCH]
    )
    return list(dict.fromkeys(str(trade_id) for trade_id in rows))


def withdrawal_deliveries_send(*, trade_id: str) -> int:
    """Attempt the trade's due deliveries: find items that were on their way, fix each ready
    item's offer key, send and confirm each key's offer (network calls, no transaction open)
    and move its items to ``active``. Returns how many items went live."""
    claimed = _claim(trade_id)
    if not claimed:
        return 0
    trade = Trade.objects.get(pk=trade_id)
    deliverable = _still_deliverable(claimed)
    _find_arrived(trade, [row for row in deliverable if not row.asset_id])
    ready = [row for row in deliverable if row.asset_id]
    went = 0
    for key, rows in _offers_of(trade_id, ready).items():
        went += _offer_send(trade, key, rows)
    return went


def _claim(trade_id: str) -> list[BotDelivery]:
    """The trade's due rows this attempt now holds (compare-and-set on the deadline)."""
    now = clock.now()
    claimed = []
    for row in BotDelivery.objects.filter(
        trade_id=trade_id, state=BotDelivery.State.WAITING, next_attempt_at__lte=now
    ):
        taken = BotDelivery.objects.filter(
            pk=row.pk, state=BotDelivery.State.WAITING, next_attempt_at=row.next_attempt_at
        ).update(next_attempt_at=now + CLAIM, attempts=F("attempts") + 1, updated_at=now)
        if taken:
            row.next_attempt_at = now + CLAIM
            row.attempts += 1
            claimed.append(row)
    return claimed


def _later(row: BotDelivery, wait: timedelta, error: str) -> None:
    """Release the claim: the row is due again after ``wait`` (only if still ours)."""
    now = clock.now()
    BotDelivery.objects.filter(
        pk=row.pk, state=BotDelivery.State.WAITING, next_attempt_at=row.next_attempt_at
    ).update(next_attempt_at=now + wait, error=error[:200], updated_at=now)


def _backoff(row: BotDelivery) -> timedelta:
    doubled: int = 2 ** max(row.attempts - 1, 0)
    return min(FIRST_RETRY * doubled, LAST_RETRY)


def _close(row: BotDelivery, state: str, error: str = "") -> None:
    BotDelivery.objects.filter(pk=row.pk, state=BotDelivery.State.WAITING).update(
        state=state, error=error[:200], updated_at=clock.now()
    )


def _deliverable(item: TradeItem) -> bool:
    return (
        item.status == Status.PENDING and bool(item.purchase_ref) and not item.cancel_requested_at
    )


def _still_deliverable(rows: list[BotDelivery]) -> list[BotDelivery]:
    """Rows whose item still waits for its offer; the others are closed (offered by a run
    whose answer the poller applied, or ended: cancelled, failed)."""
    items = TradeItem.objects.in_bulk([row.item_id for row in rows])
    deliverable = []
    for row in rows:
        item = items[row.item_id]
        if _deliverable(item):
            deliverable.append(row)
        elif item.offer_id:
            _close(row, BotDelivery.State.OFFERED)
        else:
            _close(row, BotDelivery.State.ENDED, f"the item is {item.status}")
    return deliverable


def _find_arrived(trade: Trade, rows: list[BotDelivery]) -> None:
    """Items a supplier delivers to the bot: found in its inventory by name (and float), one
    asset per item; not there yet, or not tradable yet, they are looked for later."""
    by_inventory: dict[tuple[str, int], list[BotDelivery]] = defaultdict(list)
    for row in rows:
        by_inventory[(row.bot_platform_id, row.game)].append(row)
    for (bot, game), waiting in by_inventory.items():
        try:
            held = get_platform().inventory(bot, game, tenant=str(trade.merchant_id))
        except PlatformError as exc:
            for row in waiting:
                _later(row, _backoff(row), f"inventory of {bot}: {exc}")
            continue
        taken = _assets_taken(bot)
        for row in waiting:
            asset = _match(row, held, taken)
            if asset is None:
                _not_arrived(row, held)
            elif _asset_record(row, asset.asset_id):
                taken.add(asset.asset_id)


def _assets_taken(bot: str) -> set[str]:
    """Assets of the bot another delivery is handing over now."""
    return set(
        BotDelivery.objects.filter(bot_platform_id=bot)
        .filter(
            Q(state=BotDelivery.State.WAITING)
            | Q(state=BotDelivery.State.OFFERED, item__status=Status.ACTIVE)
        )
        .exclude(asset_id="")
        .values_list("asset_id", flat=True)
    )


def _match(row: BotDelivery, held: list[InventoryAsset], taken: set[str]) -> InventoryAsset | None:
    for asset in held:
        if (
            asset.tradable
            and asset.asset_id not in taken
            and asset.market_hash_name == row.market_hash_name
            and asset.amount >= row.amount
            and (
                row.wear is None
                or (asset.wear is not None and abs(asset.wear - row.wear) <= WEAR_TOLERANCE)
            )
        ):
            return asset
    return None


def _not_arrived(row: BotDelivery, held: list[InventoryAsset]) -> None:
    protected = any(a.market_hash_name == row.market_hash_name and not a.tradable for a in held)
    if protected:
        _later(row, NOT_TRADABLE_YET, "in the bot's inventory, not tradable yet")
    else:
        _later(row, ARRIVAL_LOOK_EVERY, "not in the bot's inventory yet")


def _asset_record(row: BotDelivery, asset_id: str) -> bool:
    try:
        with transaction.atomic():
            recorded = BotDelivery.objects.filter(
                pk=row.pk, state=BotDelivery.State.WAITING, asset_id=""
            ).update(asset_id=asset_id, updated_at=clock.now())
    except IntegrityError:  # another delivery took that asset first
        _later(row, FIRST_RETRY, f"asset {asset_id} is another delivery's")
        return False
    if recorded:
        row.asset_id = asset_id
    return bool(recorded)


def _offers_of(trade_id: str, ready: list[BotDelivery]) -> dict[str, list[BotDelivery]]:
    """Each offer key with its rows. Ready rows without a key get one now, shared by the
    trade's rows of one bot (fixed by a compare-and-set: the key never changes afterwards)."""
    fresh: dict[str, list[BotDelivery]] = defaultdict(list)
    for row in ready:
        if not row.offer_key:
            fresh[row.bot_platform_id].append(row)
    for rows in fresh.values():
        items = TradeItem.objects.in_bulk([row.item_id for row in rows])
        key = delivery_offer_key(trade_id, [items[row.item_id].position for row in rows])
        BotDelivery.objects.filter(pk__in=[row.pk for row in rows], offer_key="").update(
            offer_key=key
        )
        for row in rows:
            row.offer_key = key
    keys: dict[str, list[BotDelivery]] = defaultdict(list)
    for row in ready:
        keys[row.offer_key].append(row)
    return keys


def _offer_send(trade: Trade, key: str, rows: list[BotDelivery]) -> int:
    """Send (or find) the key's offer and confirm it; live, its items move to ``active``."""
    platform = get_platform()
    tenant = str(trade.merchant_id)
    # Every item of the key, claimed now or not: a key always names the same items.
    carried = list(BotDelivery.objects.filter(offer_key=key))
    try:
        offer = platform.offer_deliver(
            tenant=tenant,
            key=key,
            platform_id=trade.client_platform_id,
            trade_url=trade.client_trade_url,
            game=trade.game,
            assets=[OfferAsset(row.asset_id, row.amount) for row in carried],
            bot_platform_id=rows[0].bot_platform_id,
        )
        sent = platform.offer_confirm(tenant=tenant, offer_id=offer.offer_id)
    except OfferRefusedError as exc:
        _refused(str(trade.id), carried, exc.reason)
        return 0
    except PlatformError as exc:
        logger.warning("delivery offer %s not sent now: %s", key, exc)
        for row in rows:
            _later(row, _backoff(row), str(exc))
        return 0
    if not sent.sent:
        for row in rows:
            _later(row, _backoff(row), f"offer {sent.offer_id} not confirmed yet")
        return 0
    return _live(str(trade.id), carried, sent)


def _live(trade_id: str, rows: list[BotDelivery], sent: TradeOffer) -> int:
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        carried = {row.item_id for row in rows}
        targets = [i for i in items if i.pk in carried and _deliverable(i)]
        if targets:
            withdrawal_items_delivered(
                trade=trade,
                items=items,
                targets=targets,
                actor="platform",
                offer_id=sent.offer_id,
                bot_info=bot_info_json(sent.bot),
            )
        BotDelivery.objects.filter(pk__in=[r.pk for r in rows]).update(
            state=BotDelivery.State.OFFERED, error="", updated_at=clock.now()
        )
    return len(targets)


def _refused(trade_id: str, rows: list[BotDelivery], reason: str) -> None:
    """The platform will not make the offer (an item gone, the recipient unable to trade):
    the items fail and are refunded, once."""
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        carried = {row.item_id for row in rows}
        targets = [i for i in items if i.pk in carried and _deliverable(i)]
        if targets:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=targets,
                to=Status.FAILED,
                actor="platform",
                kind="delivery_refused",
                error=reason,
            )
        BotDelivery.objects.filter(pk__in=[r.pk for r in rows]).update(
            state=BotDelivery.State.ENDED, error=reason[:200], updated_at=clock.now()
        )
