"""How a trade looks wherever it is shown (contract 2.3): the API's answers of every flow, the
``trade.*`` webhooks and the feed's ``trade`` events carry the same body, built here once. Optional
fields are left out (``NotRequired``), not null."""

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, NotRequired, TypedDict, cast

from core.shapes import Uuid
from trading.models import CatalogItem, Trade, TradeItem
from trading.platform.base import BotInfo

Game = Literal["730", "252490"]
Delivery = Literal["standard", "instant"]
TradeType = Literal["deposit", "withdraw"]
TradeSource = Literal["client", "self"]
Phase = Literal[
    "Phase 1", "Phase 2", "Phase 3", "Phase 4", "Ruby", "Sapphire", "Black Pearl", "Emerald"
]


class BotInfoOut(TypedDict):
    name: str
    avatar: str
    platformId: str


class TradeItemOfferOut(TypedDict):
    price: Decimal
    delivery: NotRequired[Delivery]


class CatalogDetails(TypedDict, total=False):
    """What a trade item shows once resolved against the catalog (kept on the item)."""

    name: str
    marketHashName: str
    type: str
    iconUrl: str


class TradeItemOut(CatalogDetails):
    id: str
    externalId: NotRequired[str]
    appid: int
    tradable: bool
    amount: int
    status: str
    offer: TradeItemOfferOut
    phase: NotRequired[str]
    error: NotRequired[str]
    offerID: NotRequired[str]
    holdEndDate: NotRequired[datetime]


class CollateralOut(TypedDict):
    merchant: Decimal
    provider: Decimal


class TradeOut(TypedDict):
    id: Uuid
    type: TradeType
    source: TradeSource
    status: str
    game: Game
    externalId: NotRequired[str]
    merchantId: str
    clientUserId: NotRequired[str]
    externalClientUserId: NotRequired[str]
    clientPlatformID: str
    clientTradeUrl: str
    items: list[TradeItemOut]
    totalPrice: Decimal
    preCredit: NotRequired[Decimal]
    pendingCredit: NotRequired[Decimal]
    isInstant: NotRequired[bool]
    collateral: NotRequired[CollateralOut]
    holdEndDate: NotRequired[datetime]
    offerID: NotRequired[str]
    botInfo: NotRequired[BotInfoOut]
    error: NotRequired[str]
    revertedBy: NotRequired[str]
    activeAt: NotRequired[datetime]
    autoCancelAt: NotRequired[datetime]
    createdAt: datetime
    updatedAt: datetime


def bot_info_json(bot: BotInfo) -> BotInfoOut:
    return {"name": bot.name, "avatar": bot.avatar, "platformId": bot.platform_id}


def catalog_details(item: CatalogItem | None) -> CatalogDetails:
    """What a trade item shows once resolved against the catalog."""
    if item is None:
        return {}
    return {
        "name": item.name,
        "marketHashName": item.market_hash_name,
        "type": item.item_type,
        "iconUrl": item.icon_url,
    }


def trade_item_json(item: TradeItem) -> TradeItemOut:
    """Only what is known: a fresh withdrawal item shows what was submitted; catalog details
    (name, marketHashName, type, iconUrl) appear once resolved."""
    offer: TradeItemOfferOut = {"price": item.price}
    if item.delivery:
        offer["delivery"] = cast(Delivery, item.delivery)
    details: CatalogDetails = item.details
    body: TradeItemOut = {
        "id": item.public_id,
        **details,
        "appid": item.appid,
        "tradable": item.tradable,
        "amount": item.amount,
        "status": item.status,
        "offer": offer,
    }
    if item.external_id:
        body["externalId"] = item.external_id
    if item.phase:
        body["phase"] = item.phase
    if item.error:
        body["error"] = item.error
    if item.offer_id:
        body["offerID"] = item.offer_id
    if item.hold_end_date:
        body["holdEndDate"] = item.hold_end_date
    return body


def trade_json(trade: Trade, items: list[TradeItem] | None = None) -> TradeOut:
    items = items if items is not None else list(trade.items.all())
    body: TradeOut = {
        "id": str(trade.id),
        "type": cast(TradeType, trade.type),
        "source": cast(TradeSource, trade.source),
        "status": trade.status,
        "game": cast(Game, str(trade.game)),
        "merchantId": str(trade.merchant_id),
        "clientPlatformID": trade.client_platform_id,
        "clientTradeUrl": trade.client_trade_url,
        "items": [trade_item_json(item) for item in items],
        "totalPrice": trade.total_price,
        "createdAt": trade.created_at,
        "updatedAt": trade.updated_at,
    }
    if trade.external_id:
        body["externalId"] = trade.external_id
    if trade.source == Trade.Source.CLIENT and trade.client_id is not None:
        body["clientUserId"] = str(trade.client_id)
    if trade.external_client_user_id:
        body["externalClientUserId"] = trade.external_client_user_id
    if trade.type == Trade.Type.DEPOSIT:
        body["preCredit"] = trade.pre_credit
        body["pendingCredit"] = trade.pending_credit
        body["isInstant"] = trade.is_instant
        body["collateral"] = {
            "merchant": trade.collateral_merchant,
            "provider": trade.collateral_provider,
        }
    if trade.hold_end_date:
        body["holdEndDate"] = trade.hold_end_date
    if trade.offer_id:
        body["offerID"] = trade.offer_id
    if trade.bot_info:
        body["botInfo"] = trade.bot_info
    if trade.error:
        body["error"] = trade.error
    if trade.reverted_by:
        body["revertedBy"] = trade.reverted_by
    if trade.active_at:
        body["activeAt"] = trade.active_at
    if trade.auto_cancel_at:
        body["autoCancelAt"] = trade.auto_cancel_at
    return body


# What a listing and an inventory item show of the item (the market's and the accounts' shapes).


class StickerOut(TypedDict):
    name: str
    marketHashName: str
    slot: int
    wear: float
    iconUrl: str


class CharmOut(TypedDict):
    name: str
    marketHashName: str
    iconUrl: str


class DopplerOut(TypedDict):
    name: Phase
    paintIndex: int


class ItemFields(TypedDict):
    """What a listing and an inventory item both show."""

    id: str
    name: str
    marketHashName: str
    type: NotRequired[str]
    iconUrl: NotRequired[str]
    appid: int
    tradable: bool
    amount: int
    marketPrice: Decimal
    rarity: NotRequired[str]
    color: NotRequired[str]
    exterior: NotRequired[str]
    wear: NotRequired[str]
    paintSeed: NotRequired[int]
    propId: NotRequired[str]
    previewToken: NotRequired[str]
    doppler: NotRequired[DopplerOut]
    charm: NotRequired[CharmOut]
    stickers: NotRequired[list[StickerOut]]


def _sticker(raw: dict[str, Any]) -> StickerOut:
    """A sticker as the platform or the marketplace gives it."""
    return {
        "name": raw["name"],
        "marketHashName": raw["marketHashName"],
        "slot": raw["slot"],
        "wear": raw["wear"],
        "iconUrl": raw["iconUrl"],
    }


def _charm(raw: dict[str, Any]) -> CharmOut:
    return {"name": raw["name"], "marketHashName": raw["marketHashName"], "iconUrl": raw["iconUrl"]}


def first_game_details(
    body: ItemFields,
    *,
    exterior: str,
    wear: Decimal | None,
    paint_seed: int | None,
    phase: str,
    paint_index: int | None,
    stickers: list[dict[str, Any]],
    charm: dict[str, Any] | None,
    prop_id: str,
    preview_token: str,
) -> None:
    body["stickers"] = [_sticker(sticker) for sticker in stickers]
    if exterior:
        body["exterior"] = exterior
    if wear is not None:
        body["wear"] = f"{wear:.10f}".rstrip("0").rstrip(".") if wear else "0"
    if paint_seed is not None:
        body["paintSeed"] = paint_seed
    if phase and paint_index is not None:
        body["doppler"] = {"name": cast(Phase, phase), "paintIndex": paint_index}
    if charm:
        body["charm"] = _charm(charm)
    if prop_id:
        body["propId"] = prop_id
    if preview_token:
        body["previewToken"] = preview_token
