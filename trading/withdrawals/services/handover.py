"""What the purchase side tells about withdrawal items one of our bots hands to the recipient
(``BotDelivery`` rows): the item is bought and held by a bot (own stock) or on its way to one
(a supplier that delivers to our bot), it arrived, or it will never be handed over. Each is
written in the caller's transaction; ``deliveries`` sends the offers."""

from datetime import timedelta

from core import clock
from core.handoffs import Handoff, handoff_on_commit
from trading.marketplace.base import HeldItem, Listing
from trading.models import BotDelivery, CatalogItem, TradeItem

# An item on its way to a bot is looked for this long after each look, whatever the supplier
# says meanwhile (its word that the item arrived makes the delivery due at once).
ARRIVAL_LOOK_EVERY = timedelta(minutes=10)
BOT_DELIVERY = Handoff("trading.deliver_withdrawal")


def bot_delivery_expect(*, item: TradeItem, held: HeldItem, listing: Listing) -> None:
    """The item's purchase is being recorded and a bot hands it over: its delivery row, due at
    once when the bot holds the item, else when it is next looked for."""
    now = clock.now()
    name = (
        CatalogItem.objects.filter(pk=listing.catalog_id)
        .values_list("market_hash_name", flat=True)
        .first()
    )
    _, created = BotDelivery.objects.get_or_create(
        item=item,
        defaults={
            "trade_id": item.trade_id,
            "bot_platform_id": held.bot_platform_id,
            "game": listing.game,
            "asset_id": held.asset_id,
            "market_hash_name": name or "",
            "wear": listing.wear,
            "amount": item.amount,
            "next_attempt_at": now if held.asset_id else now + ARRIVAL_LOOK_EVERY,
            "created_at": now,
            "updated_at": now,
        },
    )
    if created and held.asset_id:
        handoff_on_commit(BOT_DELIVERY, str(item.trade_id))


def bot_delivery_arrived(*, item_pk: int) -> None:
    """The supplier says the item is in our bot: look for it now."""
    now = clock.now()
    found = BotDelivery.objects.filter(
        item_id=item_pk, state=BotDelivery.State.WAITING, asset_id=""
    ).update(next_attempt_at=now, updated_at=now)
    if found:
        trade_id = TradeItem.objects.filter(pk=item_pk).values_list("trade_id", flat=True).get()
        handoff_on_commit(BOT_DELIVERY, str(trade_id))


def bot_delivery_ended(*, item_pk: int, reason: str) -> None:
    """The item will not be handed over (its purchase was cancelled)."""
    BotDelivery.objects.filter(item_id=item_pk, state=BotDelivery.State.WAITING).update(
        state=BotDelivery.State.ENDED, error=reason[:200], updated_at=clock.now()
    )
