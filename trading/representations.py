"""How listings, inventories, prices and trade URL checks look in API responses and feed events
(contract 2.3; a trade's shapes are ``trading.trades.shapes``): each shape once,
as a ``TypedDict`` the body builders return and the OpenAPI document is generated from. Optional
fields are left out (``NotRequired``), not null."""

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, TypedDict, cast

from core.shapes import Doc
from trading.games import CS_GAME
from trading.marketplace.base import Listing
from trading.models import CatalogItem
from trading.platform.base import STATE_MESSAGES, InventoryAsset, PlatformUser
from trading.pricing import fee_inclusive
from trading.trades.shapes import BotInfoOut, Delivery, Game, bot_info_json

Phase = Literal[
    "Phase 1", "Phase 2", "Phase 3", "Phase 4", "Ruby", "Sapphire", "Black Pearl", "Emerald"
]
EconomyBan = Literal["none", "probation", "banned"]


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


class _ItemFields(TypedDict):
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


class ListingOfferOut(TypedDict):
    price: Decimal
    reference: str
    delivery: Delivery


class ListingOut(_ItemFields):
    offer: ListingOfferOut
    botInfo: NotRequired[BotInfoOut]


class MarketPageOut(TypedDict):
    items: list[ListingOut]
    count: int


class InventoryOfferOut(TypedDict):
    price: Decimal
    accepted: bool
    maxAmount: NotRequired[int]


class InventoryItemOut(_ItemFields):
    assetId: str
    offer: InventoryOfferOut


class InventoryOut(TypedDict):
    inventory: list[InventoryItemOut]
    count: int
    updatedAt: datetime
    collateral: Decimal


class WithdrawPricesOut(TypedDict):
    standard: Decimal | None
    instant: Decimal | None


class PhaseEntryOut(TypedDict):
    phase: Phase
    accepted: bool
    deposit: Decimal
    withdraw: WithdrawPricesOut


class PriceEntryOut(TypedDict):
    itemId: str | None
    marketHashName: str
    accepted: bool
    deposit: Decimal
    withdraw: Annotated[
        WithdrawPricesOut | Decimal | None,
        Doc("game 730: {standard, instant}; game 252490: one price; null: none"),
    ]
    phases: NotRequired[list[PhaseEntryOut]]


class SuggestionOut(TypedDict):
    id: str
    marketHashName: str
    iconUrl: str
    rarity: str
    rarityColor: str
    itemType: str


class ReasonOut(TypedDict):
    escrowDays: int
    probation: bool


class BansOut(TypedDict):
    antiCheatBanned: bool
    gameBans: int
    economyBan: EconomyBan


class TradeUrlCheckOut(TypedDict):
    state: Annotated[int, Doc(minimum=1, maximum=10)]
    platformid: str
    message: str
    canTrade: bool
    reason: ReasonOut
    bans: BansOut


def bans_json(user: PlatformUser) -> BansOut:
    return {
        "antiCheatBanned": user.anti_cheat_banned,
        "gameBans": user.game_bans,
        "economyBan": cast(EconomyBan, user.economy_ban),
    }


def trade_url_check_json(user: PlatformUser) -> TradeUrlCheckOut:
    return {
        "state": int(user.state),
        "platformid": user.platform_id,
        "message": STATE_MESSAGES[user.state],
        "canTrade": user.can_trade,
        "reason": {"escrowDays": user.escrow_days, "probation": user.economy_ban == "probation"},
        "bans": bans_json(user),
    }


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


def _first_game_details(
    body: _ItemFields,
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


def listing_json(
    listing: Listing,
    item: CatalogItem,
    *,
    fee_rate: Decimal,
    reference: Decimal | None = None,
) -> ListingOut:
    """``reference``: the quote of the listing's phase, for phased items."""
    price = fee_inclusive(listing.price, fee_rate)
    quote = reference if reference is not None else item.reference_price
    body: ListingOut = {
        "id": listing.id,
        "name": item.name,
        "marketHashName": item.market_hash_name,
        "type": item.item_type,
        "iconUrl": item.icon_url,
        "appid": item.game,
        "rarity": item.rarity,
        "color": item.rarity_color,
        "tradable": True,
        "amount": listing.amount,
        "marketPrice": quote if item.game == CS_GAME else price,
        "offer": {
            "price": price,
            "reference": item.id,
            "delivery": cast(Delivery, listing.delivery),
        },
    }
    if item.game == CS_GAME:
        _first_game_details(
            body,
            exterior=item.exterior,
            wear=listing.wear,
            paint_seed=listing.paint_seed,
            phase=listing.phase,
            paint_index=listing.paint_index,
            stickers=listing.stickers,
            charm=listing.charm,
            prop_id=listing.prop_id,
            preview_token=listing.preview_token,
        )
    if listing.bot is not None:
        body["botInfo"] = bot_info_json(listing.bot)
    return body


def inventory_item_json(
    asset: InventoryAsset,
    item: CatalogItem | None,
    *,
    offer_price: Decimal,
    accepted: bool,
    reference: Decimal | None = None,
) -> InventoryItemOut:
    """``reference``: the quote the offer is priced from (a phase's own for phased items)."""
    offer: InventoryOfferOut = {"price": offer_price, "accepted": accepted}
    if asset.game != CS_GAME:
        # Stacks of the second game go at most one unit per deposit.
        offer["maxAmount"] = 1 if accepted else 0
    market_price = _inventory_market_price(asset, item, offer_price, reference)
    body: InventoryItemOut
    if item is not None:
        body = {
            "id": f"{asset.game}_{asset.asset_id}",
            "assetId": asset.asset_id,
            "name": item.name,
            "marketHashName": item.market_hash_name,
            "type": item.item_type,
            "iconUrl": item.icon_url,
            "appid": item.game,
            "rarity": item.rarity,
            "color": item.rarity_color,
            "tradable": asset.tradable,
            "amount": asset.amount,
            "marketPrice": market_price,
            "offer": offer,
        }
    else:
        body = {
            "id": f"{asset.game}_{asset.asset_id}",
            "assetId": asset.asset_id,
            "name": asset.market_hash_name,
            "marketHashName": asset.market_hash_name,
            "appid": asset.game,
            "tradable": asset.tradable,
            "amount": asset.amount,
            "marketPrice": market_price,
            "offer": offer,
        }
    if asset.game == CS_GAME:
        _first_game_details(
            body,
            exterior=item.exterior if item else "",
            wear=asset.wear,
            paint_seed=asset.paint_seed,
            phase=asset.phase,
            paint_index=asset.paint_index,
            stickers=asset.stickers,
            charm=asset.charm,
            prop_id=asset.prop_id,
            preview_token=asset.preview_token,
        )
    return body


def _inventory_market_price(
    asset: InventoryAsset, item: CatalogItem | None, offer_price: Decimal, reference: Decimal | None
) -> Decimal:
    """First game: the market reference quote. Second game: the offer price rounded up (it is
    already in whole cents)."""
    if asset.game != CS_GAME:
        return offer_price
    if item is None:
        return Decimal("0.00")
    return reference if reference is not None else item.reference_price


# The feed's ``market`` events (decisions section 10, docs/feed.md). ``source`` is the listing's
# delivery: supplier listings (``standard``) or the service's own stock (``instant``).
class MarketListingPatchOut(TypedDict):
    """What changes of a listing that stays: its price and the units left."""

    id: str
    amount: int
    marketPrice: Decimal
    offer: ListingOfferOut


class MarketUpsertOut(TypedDict):
    type: Literal["upsert"]
    game: Game
    source: Delivery
    item: ListingOut
    at: datetime


class MarketPatchOut(TypedDict):
    type: Literal["patch"]
    game: Game
    source: Delivery
    item: MarketListingPatchOut
    at: datetime


class MarketRemoveOut(TypedDict):
    type: Literal["remove"]
    game: Game
    source: Delivery
    itemId: str


class MarketSyncOut(TypedDict):
    """Refetch the market over REST: after ``subscribe`` (every source of the game), or when
    the feed dropped events of a source for this socket (``feed``)."""

    type: Literal["sync"]
    reason: Literal["subscribe", "feed"]
    game: Game
    source: NotRequired[Delivery]


def market_patch_json(item: ListingOut) -> MarketListingPatchOut:
    return {
        "id": item["id"],
        "amount": item["amount"],
        "marketPrice": item["marketPrice"],
        "offer": item["offer"],
    }


def market_item_priced(
    item: dict[str, Any], *, game: int, sourcing: Decimal, fee_rate: Decimal
) -> dict[str, Any]:
    """A listing of a market event (full or patch), priced for a merchant paying ``fee_rate``:
    the offer price, and on the second game the market price that follows it."""
    price = fee_inclusive(sourcing, fee_rate)
    priced = {**item, "offer": {**item["offer"], "price": price}}
    if game != CS_GAME:
        priced["marketPrice"] = price
    return priced


def market_sync_json(
    *, game: int, reason: Literal["subscribe", "feed"], source: str | None = None
) -> MarketSyncOut:
    body: MarketSyncOut = {"type": "sync", "reason": reason, "game": cast(Game, str(game))}
    if source is not None:
        body["source"] = cast(Delivery, source)
    return body
