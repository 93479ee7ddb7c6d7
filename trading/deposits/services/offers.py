"""A deposit's trade offer: the bot makes it, confirms it and sends it; each step re-checks the
trade under its lock, so running it twice changes nothing."""

from datetime import timedelta
from typing import Protocol

from django.conf import settings
from django.db import transaction

from core import clock
from trading.deposits.services.outcomes import deposit_ended
from trading.models import Status, Trade, TradeItem
from trading.platform import get_platform
from trading.platform.base import OfferAsset, OfferRefusedError, PlatformError, TradeOffer
from trading.trades.channels import trade_events_publish
from trading.trades.services import Move, trade_apply, trade_lock
from trading.trades.shapes import bot_info_json


def asset_id_of(item: TradeItem) -> str:
    """Inventory item ids are ``<game>_<assetId>``."""
    return item.public_id.split("_", 1)[1]


def deposit_offer_send(*, trade_id: str, confirm: bool = True) -> None:
    """The bot makes the trade offer and (``confirm``) confirms it: initiated -> pending ->
    active. Network calls happen outside transactions; each step re-checks the state under the
    trade's lock, so running this twice changes nothing. A transient platform error leaves the
    trade for the sweep; a refusal fails it."""
    trade = Trade.objects.filter(pk=trade_id, type=Trade.Type.DEPOSIT).first()
    if trade is None or trade.status not in (Status.INITIATED, Status.PENDING):
        return
    platform = get_platform()
    tenant = str(trade.merchant_id)
    try:
        offer_id = trade.offer_ref
        if trade.status == Status.INITIATED:
            items = list(trade.items.all())
            offer = platform.offer_create(
                tenant=tenant,
                key=f"deposit-{trade.id}",
                platform_id=trade.client_platform_id,
                trade_url=trade.client_trade_url,
                game=trade.game,
                assets=[OfferAsset(asset_id_of(item), item.amount) for item in items],
            )
            deposit_step(trade_id=trade_id, step=deposit_offer_created, offer=offer)
            offer_id = offer.offer_id
        if not confirm:
            return
        sent = platform.offer_confirm(tenant=tenant, offer_id=offer_id)
        if sent.sent:
            deposit_step(trade_id=trade_id, step=deposit_offer_sent, offer=sent)
    except OfferRefusedError as exc:
        with transaction.atomic():
            trade, items = trade_lock(trade_id=trade_id)
            targets = [i for i in items if i.status in (Status.INITIATED, Status.PENDING)]
            if targets:
                deposit_ended(
                    trade=trade,
                    items=items,
                    to=Status.FAILED,
                    actor="platform",
                    kind="offer_refused",
                    error=exc.reason,
                )
    except PlatformError:
        return


class OfferStep(Protocol):
    def __call__(
        self, *, trade: Trade, items: list[TradeItem], offer: TradeOffer, actor: str
    ) -> None: ...


def deposit_step(*, trade_id: str, step: OfferStep, offer: TradeOffer) -> None:
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        step(trade=trade, items=items, offer=offer, actor="platform")


def deposit_offer_created(
    *, trade: Trade, items: list[TradeItem], offer: TradeOffer, actor: str
) -> None:
    """The bot made the offer; it awaits the bot's confirmation."""
    if trade.status != Status.INITIATED:
        return
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="offer_created",
        moves=[Move(item, Status.PENDING) for item in items],
        trade_fields={"offer_ref": offer.offer_id, "bot_info": bot_info_json(offer.bot)},
    )
    trade_events_publish(change)


def deposit_offer_sent(
    *, trade: Trade, items: list[TradeItem], offer: TradeOffer, actor: str
) -> None:
    """Confirmed and sent: the owner can accept it until it expires."""
    if trade.status != Status.PENDING:
        return
    now = clock.now()
    change = trade_apply(
        trade=trade,
        items=items,
        actor=actor,
        kind="offer_sent",
        moves=[Move(item, Status.ACTIVE, {"offer_id": offer.offer_id}) for item in items],
        trade_fields={
            "offer_id": offer.offer_id,
            "bot_info": bot_info_json(offer.bot),
            "active_at": now,
            "offer_expires_at": now + timedelta(minutes=settings.DEPOSIT_OFFER_MINUTES),
        },
    )
    trade_events_publish(change)
