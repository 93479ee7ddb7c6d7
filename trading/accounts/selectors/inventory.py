"""A user's inventory with the merchant's deposit offers (contract 4.13): platform data cached
15 minutes of service-clock time per merchant, platform id and game (the platform answers each
merchant from its own world in the sandbox); prices applied on every read."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache

from core import clock
from core.errors import DomainError
from core.market_version import market_version
from core.metrics import PLATFORM_FLEET
from merchants.models import Client, Merchant
from trading.accounts.selectors.collateral import client_collateral_available
from trading.games import CS_GAME, GAMES
from trading.marketplace import get_marketplace
from trading.marketplace.base import MarketSort
from trading.models import CatalogItem, CatalogPhase
from trading.platform import get_platform
from trading.platform.base import FleetStatus, InventoryAsset, PlatformError, TradeUrlState
from trading.pricing import ZERO, deposit_price
from trading.selectors.switches import game_settings_get

USER_STATE_ERRORS = {
    TradeUrlState.BANNED: "USER_NOT_TRADEABLE",
    TradeUrlState.USER_NOT_TRADEABLE: "USER_NOT_TRADEABLE",
    TradeUrlState.INVENTORY_PRIVATE: "INVENTORY_PRIVATE",
    TradeUrlState.USER_NOT_FOUND: "USER_NOT_FOUND",
    TradeUrlState.PLATFORM_UNAVAILABLE: "PLATFORM_UNAVAILABLE",
    TradeUrlState.UNKNOWN_ERROR: "INVENTORY_FETCH_FAILED",
}


@dataclass(frozen=True)
class InventoryQuery:
    game: int
    refresh: bool
    accepted_only: bool
    search: str
    sort: MarketSort | None
    min_price: Decimal | None
    max_price: Decimal | None
    page: int
    limit: int  # -1: everything


@dataclass(frozen=True)
class TradeUrlInventory:
    """The inventory of the account behind a trade URL (a merchant's read of any account)."""

    trade_url: str
    query: InventoryQuery


@dataclass(frozen=True)
class _Snapshot:
    assets: list[InventoryAsset]
    fetched_at: datetime


def deposits_open_check(*, game: int) -> None:
    """1014 when staff paused the game's deposits or first-game pricing is unavailable."""
    if game_settings_get(game=game).deposits_paused:
        raise DomainError("DEPOSITS_PAUSED")
    if (
        game == CS_GAME
        and not CatalogItem.objects.filter(game=CS_GAME, reference_price__gt=0).exists()
    ):
        raise DomainError("DEPOSITS_PAUSED", "Deposit pricing for game 730 is unavailable.")


# The fleet's state as the metrics show it (trading_platform_fleet_state).
FLEET_STATES = {FleetStatus.ONLINE: 2, FleetStatus.DEGRADED: 1, FleetStatus.OFFLINE: 0}


def fleet_check(*, merchant: Merchant) -> None:
    platform = get_platform()
    try:
        status = platform.fleet_status(tenant=str(merchant.pk))
    except PlatformError as exc:
        raise DomainError(exc.error_key) from exc
    PLATFORM_FLEET.labels(type(platform).__name__).set(FLEET_STATES.get(status, 0))
    if status == FleetStatus.OFFLINE:
        raise DomainError("NO_BOTS_AVAILABLE")
    if status == FleetStatus.DEGRADED:
        raise DomainError("FLEET_DEGRADED", retry_after=30)


def _cache_key(merchant: Merchant, platform_id: str, game: int) -> str:
    return f"inventory:{merchant.pk}:{platform_id}:{game}"


def inventory_cache_forget(*, merchant: Merchant, platform_id: str) -> None:
    """The merchant's sandbox helper changed this user: its next read fetches afresh."""
    cache.delete_many([_cache_key(merchant, platform_id, game) for game in GAMES])


def _snapshot(merchant: Merchant, platform_id: str, game: int, refresh: bool) -> _Snapshot:
    key = _cache_key(merchant, platform_id, game)
    now = clock.now()
    cached = None if refresh else cache.get(key)
    max_age = timedelta(seconds=settings.INVENTORY_CACHE_SECONDS)
    if isinstance(cached, _Snapshot) and now - cached.fetched_at < max_age:
        return cached
    platform = get_platform()
    tenant = str(merchant.pk)
    try:
        user = platform.user(platform_id, tenant=tenant)
        if user.state in USER_STATE_ERRORS:
            raise DomainError(USER_STATE_ERRORS[user.state])
        snapshot = _Snapshot(
            assets=platform.inventory(platform_id, game, tenant=tenant), fetched_at=now
        )
    except PlatformError as exc:
        raise DomainError(exc.error_key) from exc
    cache.set(key, snapshot, timeout=settings.INVENTORY_CACHE_SECONDS)
    return snapshot


class Refusal:
    """Why an asset has no deposit offer."""

    NOT_TRADABLE = "not_tradable"
    UNKNOWN_ITEM = "unknown_item"
    NO_QUOTE = "no_quote"
    OVERSTOCKED = "overstocked"


@dataclass(frozen=True)
class DepositQuote:
    asset: InventoryAsset
    item: CatalogItem | None
    price: Decimal  # per unit; 0 when refused
    refusal: str  # "" when accepted
    reference: Decimal | None  # the phase's quote, for phased items
    room: int  # units the service's stock can still take of this catalog item

    @property
    def item_id(self) -> str:
        return f"{self.asset.game}_{self.asset.asset_id}"


def deposit_quotes(
    *, assets: list[InventoryAsset], merchant: Merchant, game: int
) -> list[DepositQuote]:
    """The merchant's current deposit offer for each asset (decisions section 2)."""
    names = {asset.market_hash_name for asset in assets}
    catalog = {
        item.market_hash_name: item
        for item in CatalogItem.objects.filter(game=game, market_hash_name__in=names)
    }
    phase_refs = {
        (item_id, phase): reference
        for item_id, phase, reference in CatalogPhase.objects.filter(
            item_id__in=[item.id for item in catalog.values()]
        ).values_list("item_id", "phase", "reference_price")
    }
    stock = get_marketplace().own_stock([item.id for item in catalog.values()])
    quotes = []
    for asset in assets:
        item = catalog.get(asset.market_hash_name)
        reference = phase_refs.get((item.id, asset.phase)) if item is not None else None
        price, refusal, room = ZERO, "", 0
        if item is None:
            refusal = Refusal.UNKNOWN_ITEM
        elif not asset.tradable:
            refusal = Refusal.NOT_TRADABLE
        else:
            room = max(0, item.stock_limit - stock.get(item.id, 0))
            price = deposit_price(
                item.reference_price if reference is None else reference,
                merchant.deposit_margin_rate,
            )
            if room == 0:
                price, refusal = ZERO, Refusal.OVERSTOCKED
            elif price == 0:
                refusal = Refusal.NO_QUOTE
        quotes.append(DepositQuote(asset, item, price, refusal, reference, room))
    return quotes


def inventory_assets(*, merchant: Merchant, platform_id: str, game: int) -> list[InventoryAsset]:
    """The owner's assets as the inventory endpoint shows them (same 15-minute snapshot)."""
    return _snapshot(merchant, platform_id, game, refresh=False).assets


def _quotes_cached(
    snapshot: _Snapshot, platform_id: str, merchant: Merchant, game: int
) -> list[DepositQuote]:
    """Offers depend on the merchant's snapshot, its margin and the market (reference prices,
    own stock): the same three give the same quotes, so they are computed once."""
    key = (
        f"inventory-quotes:{merchant.pk}:{platform_id}:{game}:{snapshot.fetched_at.timestamp()}:"
        f"{merchant.deposit_margin_rate}:{market_version()}"
    )
    quotes: list[DepositQuote] | None = cache.get(key)
    if quotes is None:
        quotes = deposit_quotes(assets=snapshot.assets, merchant=merchant, game=game)
        cache.set(key, quotes, timeout=settings.INVENTORY_CACHE_SECONDS)
    return quotes


def _name(quote: DepositQuote) -> str:
    return quote.asset.market_hash_name.lower()


_SORTS: dict[MarketSort, tuple[Callable[[DepositQuote], Any], bool]] = {
    MarketSort.RELEVANCE: (lambda q: (not q.refusal, q.price), True),
    MarketSort.PRICE_ASC: (lambda q: q.price, False),
    MarketSort.PRICE_DESC: (lambda q: q.price, True),
    MarketSort.NAME_ASC: (_name, False),
    MarketSort.NAME_DESC: (_name, True),
}


@dataclass(frozen=True)
class Inventory:
    """One page of an owner's inventory with the merchant's offers."""

    quotes: list[DepositQuote]
    count: int  # the quotes matching the query, on every page
    updated_at: datetime  # when the platform was asked
    collateral: Decimal  # a client's instant-deposit collateral; 0 for any other owner


def inventory_get(
    *, merchant: Merchant, platform_id: str, query: InventoryQuery, client: Client | None
) -> Inventory:
    deposits_open_check(game=query.game)
    fleet_check(merchant=merchant)
    snapshot = _snapshot(merchant, platform_id, query.game, query.refresh)
    quotes = _quotes_cached(snapshot, platform_id, merchant, query.game)
    if query.accepted_only:
        quotes = [q for q in quotes if not q.refusal]
    if query.search:
        needle = query.search.lower()
        quotes = [q for q in quotes if needle in _name(q)]
    if query.min_price is not None:
        quotes = [q for q in quotes if q.price >= query.min_price]
    if query.max_price is not None:
        quotes = [q for q in quotes if q.price <= query.max_price]
    if query.sort is not None:
        key, reverse = _SORTS[query.sort]
        quotes = sorted(quotes, key=key, reverse=reverse)
    count = len(quotes)
    if query.limit != -1:
        start = (query.page - 1) * query.limit
        quotes = quotes[start : start + query.limit]
    collateral = (
        client_collateral_available(client=client, merchant=merchant, now=clock.now())
        if client is not None
        else ZERO
    )
    return Inventory(
        quotes=quotes, count=count, updated_at=snapshot.fetched_at, collateral=collateral
    )
