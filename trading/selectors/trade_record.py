"""Everything the console's page of one trade shows, read in a handful of queries: the trade and
its items with where each comes from (the supplier it was bought from, the bot that hands it
over or receives it), its events, the staff actions taken on it, its webhooks with their
delivery attempts and the wallet transfers it caused."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Prefetch, Q

from core.models import StaffAction
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from trading.marketplace.suppliers.base import listing_id_parts
from trading.models import BotDelivery, SteamBot, Supplier, Trade, TradeEvent, TradeItem
from wallet.models import Transfer

OWN_STOCK = "stock"


@dataclass(frozen=True)
class ItemSource:
    """Where an item comes from or goes: the supplier bought from (withdrawals), and the bot
    handing it over (own stock, a supplier's delivery to our bot) or receiving it (deposits):
    its platform id, and its name when it is one of ours."""

    supplier: str = ""
    bot_platform_id: str = ""
    bot_name: str = ""
    bot_id: int | None = None
    delivery_state: str = ""


@dataclass
class TradeRecord:
    trade: Trade
    items: list[TradeItem]
    sources: dict[int, ItemSource]
    events: list[TradeEvent]
    staff_actions: list[StaffAction]
    webhooks: list[WebhookEvent]
    transfers: list[Transfer] = field(default_factory=list)


def _supplier_of(item: TradeItem, suppliers: set[str]) -> str:
    name, _ = listing_id_parts(item.listing_id)
    if name in suppliers:
        return "own stock" if name == OWN_STOCK else name
    if not item.listing_id:
        return ""
    return "the sandbox's marketplace" if settings.SANDBOX else "the marketplace"


def _sources(trade: Trade, items: list[TradeItem]) -> dict[int, ItemSource]:
    deliveries = {d.item_id: d for d in BotDelivery.objects.filter(item__in=items)}
    bot_info = trade.bot_info if isinstance(trade.bot_info, dict) else {}
    bot_ids = {d.bot_platform_id for d in deliveries.values()} | {bot_info.get("platformId", "")}
    ours = {
        steam_id: (pk, name)
        for pk, steam_id, name in SteamBot.objects.filter(steam_id__in=bot_ids).values_list(
            "pk", "steam_id", "name"
        )
    }
    suppliers = set(Supplier.objects.values_list("name", flat=True))
    sources = {}
    for item in items:
        delivery = deliveries.get(item.pk)
        if delivery is not None:
            bot, state = delivery.bot_platform_id, delivery.state
        else:
            bot, state = str(bot_info.get("platformId", "")), ""
        bot_id, bot_name = ours.get(bot, (None, str(bot_info.get("name", "")) if bot else ""))
        sources[item.pk] = ItemSource(
            supplier=_supplier_of(item, suppliers) if trade.type == Trade.Type.WITHDRAW else "",
            bot_platform_id=bot,
            bot_name=bot_name,
            bot_id=bot_id,
            delivery_state=state,
        )
    return sources


def trade_record_get(*, trade: Trade) -> TradeRecord:
    items = list(TradeItem.objects.filter(trade=trade).order_by("position"))
    # Money moves name the trade (its lock, a deposit's stages) or one of its items.
    caused = Q(cause_type="trade", cause_id=str(trade.pk)) | Q(
        cause_type="trade_item", cause_id__in=[str(item.pk) for item in items]
    )
    return TradeRecord(
        trade=trade,
        items=items,
        sources=_sources(trade, items),
        events=list(
            TradeEvent.objects.filter(trade=trade)
            .select_related("item")
            .order_by("created_at", "id")
        ),
        staff_actions=list(
            StaffAction.objects.filter(subject_type="trade", subject_id=str(trade.pk)).order_by(
                "created_at", "id"
            )
        ),
        webhooks=list(
            WebhookEvent.objects.filter(subject_type="trade", subject_id=str(trade.pk))
            .prefetch_related(
                Prefetch("deliveries", WebhookDelivery.objects.order_by("attempt", "id"))
            )
            .order_by("sequence", "created_at")
        ),
        transfers=list(
            Transfer.objects.filter(caused)
            .prefetch_related("postings__account")
            .order_by("created_at", "id")
        ),
    )
