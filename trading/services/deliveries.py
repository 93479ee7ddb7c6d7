"""Withdrawal deliveries sent by the service's bots: once bought items are in a bot's
inventory (the service's own stock, or a supplier that delivers to the bot), the bot offers
them to the recipient, confirms, and the offer goes live (``active``). Acceptance, holds,
declines and reversals then come from the platform's offer changes (``services.offers``)."""

from dataclasses import dataclass

from django.db import transaction

from trading.models import Status, Trade, TradeItem
from trading.platform import get_platform
from trading.platform.base import OfferAsset, OfferRefusedError, PlatformError
from trading.representations import bot_info_json
from trading.services.offers import delivery_offer_key
from trading.services.trades import trade_lock
from trading.services.withdrawals import withdrawal_items_delivered, withdrawal_items_ended


@dataclass(frozen=True)
class HeldAsset:
    """Where a bought item is now: an asset of the bot ``bot_platform_id``."""

    item_id: str  # the withdrawal item's id (its listing id)
    asset_id: str
    amount: int = 1


def _deliverable(item: TradeItem) -> bool:
    return (
        item.status == Status.PENDING and bool(item.purchase_ref) and not item.cancel_requested_at
    )


def withdrawal_delivery_send(*, trade_id: str, bot_platform_id: str, held: list[HeldAsset]) -> int:
    """The bot holding ``held`` offers those items to the recipient and confirms the offer.
    The offer's key is the trade and its items, so a repeated call sends nothing new. A refusal
    fails the items (refunded); a transient platform error leaves them pending for the next
    call. Returns how many items went live."""
    trade = Trade.objects.filter(pk=trade_id, type=Trade.Type.WITHDRAW).first()
    if trade is None:
        return 0
    by_item = {asset.item_id: asset for asset in held}
    items = [i for i in trade.items.all() if i.public_id in by_item and _deliverable(i)]
    if not items:
        return 0
    platform = get_platform()
    tenant = str(trade.merchant_id)
    key = delivery_offer_key(trade_id, [item.position for item in items])
    try:
        offer = platform.offer_deliver(
            tenant=tenant,
            key=key,
            platform_id=trade.client_platform_id,
            trade_url=trade.client_trade_url,
            game=trade.game,
            assets=[
                OfferAsset(by_item[i.public_id].asset_id, by_item[i.public_id].amount)
                for i in items
            ],
            bot_platform_id=bot_platform_id,
        )
        sent = platform.offer_confirm(tenant=tenant, offer_id=offer.offer_id)
    except OfferRefusedError as exc:
        _fail(trade_id, {i.pk for i in items}, exc.reason)
        return 0
    except PlatformError:
        return 0
    if not sent.sent:
        return 0
    with transaction.atomic():
        trade, rows = trade_lock(trade_id=trade_id)
        targets = [i for i in rows if i.pk in {item.pk for item in items} and _deliverable(i)]
        if targets:
            withdrawal_items_delivered(
                trade=trade,
                items=rows,
                targets=targets,
                actor="platform",
                offer_id=sent.offer_id,
                bot_info=bot_info_json(sent.bot),
            )
    return len(targets)


def _fail(trade_id: str, item_pks: set[int], reason: str) -> None:
    with transaction.atomic():
        trade, rows = trade_lock(trade_id=trade_id)
        targets = [i for i in rows if i.pk in item_pks and _deliverable(i)]
        if targets:
            withdrawal_items_ended(
                trade=trade,
                items=rows,
                targets=targets,
                to=Status.FAILED,
                actor="platform",
                kind="delivery_refused",
                error=reason,
            )
