"""How the market looks in API responses and feed events: listings, market pages, the price
book, suggestions, and the feed's ``market`` events."""

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, NotRequired, TypedDict, cast

from core.shapes import Doc
from trading.games import CS_GAME
from trading.marketplace.base import Listing
from trading.models import CatalogItem
from trading.pricing import fee_inclusive
from trading.trades.shapes import (
    BotInfoOut,
    Delivery,
    Game,
    ItemFields,
    Phase,
    bot_info_json,
    first_game_details,
)


class ListingOfferOut(TypedDict):
    price: Decimal
    reference: str
    delivery: Delivery


class ListingOut(ItemFields):
    offer: ListingOfferOut
    botInfo: NotRequired[BotInfoOut]


class MarketPageOut(TypedDict):
    items: list[ListingOut]
    count: int


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


def suggestion_json(item: CatalogItem) -> SuggestionOut:
    return {
        "id": item.id,
        "marketHashName": item.market_hash_name,
        "iconUrl": item.icon_url,
        "rarity": item.rarity,
        "rarityColor": item.rarity_color,
        "itemType": item.item_type,
    }


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
        first_game_details(
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
