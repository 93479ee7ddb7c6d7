"""A user's inventory with the merchant's deposit offers (contract 4.13): platform data cached
15 minutes of service-clock time per merchant, platform id and game (the platform answers each
merchant from its own world in the sandbox); offers priced again whenever the snapshot, the
merchant's margin or the market version changes (``inventory_derived``)."""

import pickle
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import connection

from core import clock
from core.db import ModelRows
from core.errors import DomainError
from core.metrics import PLATFORM_FLEET
from merchants.models import Client, Merchant
from trading.accounts.selectors.collateral import client_exposure_sql, exposure_converted
from trading.games import CS_GAME, GAMES
from trading.marketplace import get_marketplace
from trading.marketplace.base import MarketSort
from trading.models import CatalogItem, CatalogPhase, GameSettings
from trading.platform import get_platform
from trading.platform.base import FleetStatus, InventoryAsset, PlatformError, TradeUrlState
from trading.pricing import ZERO, deposit_price

T = TypeVar("T")

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
    """The platform's answer as kept: its assets pickled apart, so that a read which needs only
    ``fetched_at`` (``inventory_derived``, the inventory's hot path) never unpickles them."""

    fetched_at: datetime
    packed_assets: bytes
    # Names this fetch whatever the clock says (a frozen or repeated service time included):
    # what is derived from it is kept under it.
    fetch: str

    @property
    def assets(self) -> list[InventoryAsset]:
        assets: list[InventoryAsset] = pickle.loads(self.packed_assets)  # noqa: S301 (ours)
        return assets


@dataclass(frozen=True)
class DepositFacts:
    """What the database says of deposits of a game now, read in one statement."""

    paused: bool  # staff paused the game's deposits
    priced: bool  # the first game's catalog has a reference price (always true for the second)
    client: Client | None  # the calling client's row (``client_deposit_facts_get``), if any
    exposure: Decimal  # what the client's identity's instant deposits use; 0 without a client


_SWITCHES = ModelRows(GameSettings, only=["game", "deposits_paused"])
_PRICES = ModelRows(CatalogItem, only=["game", "reference_price"])
_CLIENTS = ModelRows(Client)
_GAME, _PAUSED = _SWITCHES.quoted(["game", "deposits_paused"])
_ITEM_GAME, _REFERENCE = _PRICES.quoted(["game", "reference_price"])
_CLIENT_MERCHANT, _CLIENT_PLATFORM_ID = _CLIENTS.quoted(["merchant", "platform_id"])
_CLIENT_ID = _CLIENTS.index("id")
_EXPOSURE_SQL, _EXPOSURE_PARAMS = client_exposure_sql("c")
# Every inventory read and every deposit asks these, a client's inventory with the client's row
# and its exposure: written out by hand, as the ORM's compilation of the four statements they
# were cost more than running them.
_PAUSED_SQL = f"(SELECT s.{_PAUSED} FROM {_SWITCHES.table('s')} WHERE s.{_GAME} = %s)"  # noqa: S608
_PRICED_SQL = (
    f"EXISTS (SELECT 1 FROM {_PRICES.table('i')}"  # noqa: S608
    f" WHERE i.{_ITEM_GAME} = %s AND i.{_REFERENCE} > %s)"
)
_CLIENT_SQL = (
    f", {_CLIENTS.columns('c')}, {_EXPOSURE_SQL} FROM (SELECT 1 AS one) o"
    f" LEFT JOIN {_CLIENTS.table('c')}"
    f" ON c.{_CLIENT_MERCHANT} = %s AND c.{_CLIENT_PLATFORM_ID} = %s"
)


def _facts(game: int, client_sql: str, client_params: list[Any]) -> tuple[Any, ...]:
    """The row: paused, priced (the first game only), then what ``client_sql`` selects. A game
    without a settings row is not paused (as ``game_settings_get`` would create it)."""
    sql = f"SELECT {_PAUSED_SQL}"
    params: list[Any] = [_SWITCHES.param("game", game)]
    if game == CS_GAME:
        sql += f", {_PRICED_SQL}"
        params += [_PRICES.param("game", CS_GAME), _PRICES.param("reference_price", ZERO)]
    with connection.cursor() as cursor:
        cursor.execute(sql + client_sql, params + client_params)
        row: tuple[Any, ...] = cursor.fetchone()
    return (
        bool(row[0]),
        bool(row[1]) if game == CS_GAME else True,
        *row[2 if game == CS_GAME else 1 :],
    )


def deposit_facts_get(*, game: int) -> DepositFacts:
    """The game's switch and the first game's pricing."""
    paused, priced = _facts(game, "", [])
    return DepositFacts(paused=paused, priced=priced, client=None, exposure=ZERO)


def client_deposit_facts_get(*, game: int, merchant: Merchant, platform_id: str) -> DepositFacts:
    """The game's switch, the first game's pricing, and the row and exposure of the merchant's
    client ``platform_id`` (the row its latest authentication stored, as ``client_get``)."""
    paused, priced, *values = _facts(
        game,
        _CLIENT_SQL,
        [
            *_EXPOSURE_PARAMS,
            _CLIENTS.param("merchant", merchant.pk),
            _CLIENTS.param("platform_id", platform_id),
        ],
    )
    if values[_CLIENT_ID] is None:  # no such client: no row, no exposure
        return DepositFacts(paused=paused, priced=priced, client=None, exposure=ZERO)
    client: Client = _CLIENTS.build(values[: _CLIENTS.width])
    client.merchant = merchant
    exposure = exposure_converted(values[_CLIENTS.width])
    return DepositFacts(paused=paused, priced=priced, client=client, exposure=exposure)


def deposit_facts_check(*, facts: DepositFacts) -> None:
    """1014 when staff paused the game's deposits or first-game pricing is unavailable."""
    if facts.paused:
        raise DomainError("DEPOSITS_PAUSED")
    if not facts.priced:
        raise DomainError("DEPOSITS_PAUSED", "Deposit pricing for game 730 is unavailable.")


def deposits_open_check(*, game: int) -> None:
    deposit_facts_check(facts=deposit_facts_get(game=game))


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


def _derived_key(merchant: Merchant, platform_id: str, game: int) -> str:
    return f"inventory-derived:{merchant.pk}:{platform_id}:{game}"


def _fresh(cached: Any, now: datetime) -> bool:
    max_age = timedelta(seconds=settings.INVENTORY_CACHE_SECONDS)
    return isinstance(cached, _Snapshot) and now - cached.fetched_at < max_age


def _snapshot(merchant: Merchant, platform_id: str, game: int, refresh: bool) -> _Snapshot:
    cached = None if refresh else cache.get(_cache_key(merchant, platform_id, game))
    return _snapshot_from(merchant, platform_id, game, cached)


def _snapshot_from(merchant: Merchant, platform_id: str, game: int, cached: Any) -> _Snapshot:
    """``cached`` (the kept snapshot as read, None to fetch afresh) while it is fresh, else the
    platform's answer, fetched and kept."""
    now = clock.now()
    if _fresh(cached, now):
        assert isinstance(cached, _Snapshot)
        return cached
    platform = get_platform()
    tenant = str(merchant.pk)
    try:
        user = platform.user(platform_id, tenant=tenant)
        if user.state in USER_STATE_ERRORS:
            raise DomainError(USER_STATE_ERRORS[user.state])
        assets = platform.inventory(platform_id, game, tenant=tenant)
        snapshot = _Snapshot(
            fetched_at=now, packed_assets=pickle.dumps(assets), fetch=secrets.token_hex(8)
        )
    except PlatformError as exc:
        raise DomainError(exc.error_key) from exc
    cache.set(
        _cache_key(merchant, platform_id, game), snapshot, timeout=settings.INVENTORY_CACHE_SECONDS
    )
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


def inventory_derived(
    *,
    merchant: Merchant,
    platform_id: str,
    game: int,
    refresh: bool,
    basis: str,
    derive: Callable[[list[InventoryAsset]], T],
) -> tuple[datetime, T]:
    """What ``derive`` makes of the owner's assets, with the time they were fetched. It is kept
    beside the snapshot for as long as the snapshot and ``basis`` (whatever else it depends on)
    stay the same, and both are read in one round trip: a kept value costs no unpickling of
    the assets. A value kept for an earlier snapshot (refreshed, expired, forgotten) is never
    served: it names the snapshot it was made from."""
    key, derived_key = (
        _cache_key(merchant, platform_id, game),
        _derived_key(merchant, platform_id, game),
    )
    found = {} if refresh else cache.get_many([key, derived_key])
    cached, kept = found.get(key), found.get(derived_key)
    if _fresh(cached, clock.now()):
        assert isinstance(cached, _Snapshot)
        if isinstance(kept, tuple) and kept[:2] == (cached.fetch, basis):
            return cached.fetched_at, kept[2]
    snapshot = _snapshot_from(merchant, platform_id, game, cached)
    value = derive(snapshot.assets)
    cache.set(derived_key, (snapshot.fetch, basis, value), timeout=settings.INVENTORY_CACHE_SECONDS)
    return snapshot.fetched_at, value
