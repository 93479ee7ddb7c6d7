"""The supplier marketplace: listings to buy (``standard``, from suppliers; ``instant``, the
service's own stock held by bots), their floors for the price book, and own-stock counts."""

from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol

from core.errors import DomainError
from trading.platform.base import BotInfo


class MarketplaceUnavailableError(DomainError):
    """The marketplace could not answer: the caller gets 503 SERVICE_UNAVAILABLE and may retry."""

    def __init__(self) -> None:
        super().__init__("SERVICE_UNAVAILABLE", "The supplier marketplace is unavailable; retry.")


class PurchaseOutcomeUnknownError(MarketplaceUnavailableError):
    """A purchase was sent and its answer lost: nothing may be refunded, retried or bought
    elsewhere for that unit until the marketplace has reconciled it (a later call with the same
    key answers once it knows)."""


class MarketSort(StrEnum):
    RELEVANCE = "relevance"
    PRICE_ASC = "priceAsc"
    PRICE_DESC = "priceDesc"
    NAME_ASC = "nameAsc"
    NAME_DESC = "nameDesc"


class Delivery(StrEnum):
    STANDARD = "standard"
    INSTANT = "instant"


@dataclass(frozen=True)
class Listing:
    id: str
    catalog_id: str
    game: int
    price: Decimal  # sourcing price, before the merchant's fee
    delivery: str
    phase: str = ""
    paint_index: int | None = None
    wear: Decimal | None = None
    paint_seed: int | None = None
    stickers: list[dict[str, Any]] = field(default_factory=list)
    charm: dict[str, Any] | None = None
    prop_id: str = ""
    preview_token: str = ""
    bot: BotInfo | None = None
    amount: int = 1


@dataclass(frozen=True)
class MarketQuery:
    game: int
    search: str
    sort: MarketSort
    min_price: Decimal | None  # sourcing-price bounds, inclusive
    max_price: Decimal | None
    offset: int
    limit: int


@dataclass(frozen=True)
class ItemListingsQuery:
    catalog_id: str
    phase: str
    float_min: Decimal | None
    float_max: Decimal | None
    offset: int
    limit: int


@dataclass(frozen=True)
class HeldItem:
    """A bought item that one of the service's bots hands to the recipient (the game platform's
    delivery): own stock the bot holds (``asset_id`` known), or an item a supplier delivers to
    the bot (``asset_id`` empty until it arrives and is found by name and float)."""

    bot_platform_id: str
    asset_id: str = ""


@dataclass(frozen=True)
class PurchaseResult:
    """``ok``: the marketplace took the order (delivery follows later: by the supplier itself,
    or by the bot ``held`` names). Otherwise ``reason`` is LISTING_UNAVAILABLE or
    PRICE_CHANGED."""

    ok: bool
    ref: str = ""
    price: Decimal | None = None
    reason: str = ""
    listing: Listing | None = None
    held: HeldItem | None = None


# (catalog id, phase or "", delivery) -> cheapest sourcing price
PriceFloors = dict[tuple[str, str, str], Decimal]


class Marketplace(Protocol):
    """Market reads are cached under the domain's market version
    (``core.market_version.market_version``): whatever learns that a listing appeared, went
    or changed price calls ``market_version_bump``. Calls raise MarketplaceUnavailableError when
    the marketplace cannot answer."""

    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        """A page of listings and the number of all that match."""

    def item_listings(self, query: ItemListingsQuery) -> list[Listing]:
        """Listings of one catalog item, cheapest first."""

    def price_floors(self, catalog_ids: list[str]) -> PriceFloors:
        """The cheapest listing price per (item, phase, delivery) of these items."""

    def own_stock(self, catalog_ids: list[str]) -> dict[str, int]:
        """How many of each item the service's bots hold."""

    def listing_id_valid(self, *, game: int, listing_id: str) -> bool:
        """Whether the id has the shape of a listing id of the game."""

    def listings_lookup(self, listing_ids: list[str]) -> dict[str, Listing | None]:
        """Each known id: its listing, or None when it was sold. Unknown ids are left out."""

    def purchase(
        self,
        *,
        listing_id: str,
        max_price: Decimal,
        key: str,
        amount: int = 1,
        trade_url: str = "",
    ) -> PurchaseResult:
        """Buy ``amount`` units of a listing at no more than ``max_price`` (sourcing, per
        unit), delivered to ``trade_url`` (the recipient's; suppliers that trade straight to the
        recipient need it). The same ``key`` always gives the same answer, so a retry never buys
        twice; a purchase whose outcome is not known yet raises MarketplaceUnavailableError,
        never a refusal, so nothing is refunded or bought elsewhere before it is known."""

    def purchase_get(self, *, key: str) -> PurchaseResult | None:
        """The purchase made under ``key``, if any: what a run that died before recording its
        order left at the supplier."""

    def cheapest(
        self, *, catalog_id: str, phase: str, delivery: str, ceiling: Decimal, limit: int
    ) -> list[Listing]:
        """The cheapest listings of an item at or below ``ceiling`` (sourcing), cheapest first."""

    def cancel(self, *, ref: str) -> bool:
        """Ask the supplier to cancel an undelivered purchase; True when it accepts."""
