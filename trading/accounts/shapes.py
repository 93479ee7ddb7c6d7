"""How a platform account looks in API responses: its inventory with the merchant's deposit
offers, and the trade-URL check (state, hold, bans)."""

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal, NotRequired, TypedDict, cast

from core.shapes import Doc
from trading.games import CS_GAME
from trading.models import CatalogItem
from trading.platform.base import STATE_MESSAGES, InventoryAsset, PlatformUser
from trading.trades.shapes import ItemFields, first_game_details

EconomyBan = Literal["none", "probation", "banned"]


class InventoryOfferOut(TypedDict):
    price: Decimal
    accepted: bool
    maxAmount: NotRequired[int]


class InventoryItemOut(ItemFields):
    assetId: str
    offer: InventoryOfferOut


class InventoryOut(TypedDict):
    inventory: list[InventoryItemOut]
    count: int
    updatedAt: datetime
    collateral: Decimal


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
        first_game_details(
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
