"""How items look in API responses (contract 2.3). Optional fields are left out, not null."""

from decimal import Decimal
from typing import Any

from trading.games import CS_GAME
from trading.marketplace.base import Listing
from trading.models import CatalogItem, Trade, TradeItem
from trading.platform.base import InventoryAsset
from trading.pricing import fee_inclusive


def _catalog_fields(item: CatalogItem) -> dict[str, Any]:
    return {
        "name": item.name,
        "marketHashName": item.market_hash_name,
        "type": item.item_type,
        "iconUrl": item.icon_url,
        "appid": item.game,
        "rarity": item.rarity,
        "color": item.rarity_color,
    }


def catalog_details(item: CatalogItem | None) -> dict[str, Any]:
    """What a trade item shows once resolved against the catalog."""
    if item is None:
        return {}
    return {
        "name": item.name,
        "marketHashName": item.market_hash_name,
        "type": item.item_type,
        "iconUrl": item.icon_url,
    }


def _first_game_details(
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
) -> dict[str, Any]:
    details: dict[str, Any] = {"stickers": stickers}
    if exterior:
        details["exterior"] = exterior
    if wear is not None:
        details["wear"] = f"{wear:.10f}".rstrip("0").rstrip(".") if wear else "0"
    if paint_seed is not None:
        details["paintSeed"] = paint_seed
    if phase and paint_index is not None:
        details["doppler"] = {"name": phase, "paintIndex": paint_index}
    if charm:
        details["charm"] = charm
    if prop_id:
        details["propId"] = prop_id
    if preview_token:
        details["previewToken"] = preview_token
    return details


def listing_json(
    listing: Listing,
    item: CatalogItem,
    *,
    fee_rate: Decimal,
    reference: Decimal | None = None,
) -> dict[str, Any]:
    """``reference``: the quote of the listing's phase, for phased items."""
    price = fee_inclusive(listing.price, fee_rate)
    quote = reference if reference is not None else item.reference_price
    body = {
        "id": listing.id,
        **_catalog_fields(item),
        "tradable": True,
        "amount": listing.amount,
        "marketPrice": quote if item.game == CS_GAME else price,
        "offer": {"price": price, "reference": item.id, "delivery": listing.delivery},
    }
    if item.game == CS_GAME:
        body |= _first_game_details(
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
        body["botInfo"] = listing.bot.as_json()
    return body


def inventory_item_json(
    asset: InventoryAsset,
    item: CatalogItem | None,
    *,
    offer_price: Decimal,
    accepted: bool,
    reference: Decimal | None = None,
) -> dict[str, Any]:
    """``reference``: the quote the offer is priced from (a phase's own for phased items)."""
    offer: dict[str, Any] = {"price": offer_price, "accepted": accepted}
    if asset.game != CS_GAME:
        # Stacks of the second game go at most one unit per deposit.
        offer["maxAmount"] = 1 if accepted else 0
    body: dict[str, Any] = {
        "id": f"{asset.game}_{asset.asset_id}",
        "assetId": asset.asset_id,
        **(
            _catalog_fields(item)
            if item is not None
            else {
                "name": asset.market_hash_name,
                "marketHashName": asset.market_hash_name,
                "appid": asset.game,
            }
        ),
        "tradable": asset.tradable,
        "amount": asset.amount,
        "marketPrice": _inventory_market_price(asset, item, offer_price, reference),
        "offer": offer,
    }
    if asset.game == CS_GAME:
        body |= _first_game_details(
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


def trade_item_json(item: TradeItem) -> dict[str, Any]:
    """Only what is known: a fresh withdrawal item shows what was submitted; catalog details
    (name, marketHashName, type, iconUrl) appear once resolved."""
    body: dict[str, Any] = {"id": item.public_id}
    if item.external_id:
        body["externalId"] = item.external_id
    body |= item.details
    offer: dict[str, Any] = {"price": item.price}
    if item.delivery:
        offer["delivery"] = item.delivery
    body |= {
        "appid": item.appid,
        "tradable": item.tradable,
        "amount": item.amount,
        "status": item.status,
        "offer": offer,
    }
    if item.phase:
        body["phase"] = item.phase
    if item.error:
        body["error"] = item.error
    if item.offer_id:
        body["offerID"] = item.offer_id
    if item.hold_end_date:
        body["holdEndDate"] = item.hold_end_date
    return body


def trade_json(trade: Trade, items: list[TradeItem] | None = None) -> dict[str, Any]:
    items = items if items is not None else list(trade.items.all())
    body: dict[str, Any] = {
        "id": str(trade.id),
        "type": trade.type,
        "source": trade.source,
        "status": trade.status,
        "game": str(trade.game),
    }
    if trade.external_id:
        body["externalId"] = trade.external_id
    body["merchantId"] = str(trade.merchant_id)
    if trade.source == Trade.Source.CLIENT and trade.client_id is not None:
        body["clientUserId"] = str(trade.client_id)
    if trade.external_client_user_id:
        body["externalClientUserId"] = trade.external_client_user_id
    body |= {
        "clientPlatformID": trade.client_platform_id,
        "clientTradeUrl": trade.client_trade_url,
        "items": [trade_item_json(item) for item in items],
        "totalPrice": trade.total_price,
    }
    if trade.type == Trade.Type.DEPOSIT:
        body |= {
            "preCredit": trade.pre_credit,
            "pendingCredit": trade.pending_credit,
            "isInstant": trade.is_instant,
            "collateral": {
                "merchant": trade.collateral_merchant,
                "provider": trade.collateral_provider,
            },
        }
    optional = {
        "holdEndDate": trade.hold_end_date,
        "offerID": trade.offer_id,
        "botInfo": trade.bot_info,
        "error": trade.error,
        "revertedBy": trade.reverted_by,
        "activeAt": trade.active_at,
        "autoCancelAt": trade.auto_cancel_at,
    }
    body |= {key: value for key, value in optional.items() if value}
    body |= {"createdAt": trade.created_at, "updatedAt": trade.updated_at}
    return body
