"""The sandbox game platform: deterministic users and inventories, configurable by the
``/sandbox/platform/users`` helper, with the platform's failures (down, rate limiting). Each
merchant (the ``tenant`` of every call) has a world of its own: the users it configured and the
fleet status it set."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from decimal import Decimal
from random import Random
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from core import clock
from core.db import ModelRows
from sandbox.models import SandboxBot, SandboxBotState, SandboxOffer, SandboxPlatformUser
from sandbox.names import EXTERIORS, catalog_entry, charm, stickers
from trading.games import CS_GAME
from trading.models import CatalogPhase, Status, Trade, TradeItem
from trading.platform.base import (
    BotInfo,
    FleetStatus,
    InventoryAsset,
    OfferAsset,
    OfferRefusedError,
    OfferUpdate,
    PlatformError,
    PlatformRateLimitedError,
    PlatformUnavailableError,
    PlatformUser,
    TradeOffer,
    TradeUrlState,
)

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class _InWorld(TypedDict):
        status: str

    FleetBot = WithAnnotations[SandboxBot, _InWorld]

# Generated inventories draw from the first entries of the catalog, which every seed contains.
INVENTORY_NAME_SPACE = 500
FAULTS: dict[str, type[PlatformError]] = {
    SandboxPlatformUser.Fault.UNAVAILABLE: PlatformUnavailableError,
    SandboxPlatformUser.Fault.RATE_LIMITED: PlatformRateLimitedError,
    SandboxPlatformUser.Fault.ERROR: PlatformError,
}


def sandbox_fleet(*, tenant: str) -> QuerySet[FleetBot]:
    """Every bot, annotated with ``status``: its status in the tenant's world (online unless
    that merchant's ``POST /sandbox/bots`` said otherwise)."""
    status = SandboxBotState.objects.filter(bot=OuterRef("pk"), merchant_id=tenant).values(
        "status"
    )[:1]
    return SandboxBot.objects.annotate(
        status=Coalesce(Subquery(status), Value(SandboxBotState.Status.ONLINE.value))
    ).order_by("id")


_BOTS = ModelRows(SandboxBot, only=["id"])
_STATES = ModelRows(SandboxBotState, only=["bot", "merchant", "status"])
_BOT_ID = _BOTS.quoted(["id"])[0]
_STATE_BOT, _STATE_MERCHANT, _STATE = _STATES.quoted(["bot", "merchant", "status"])
# The statuses of the tenant's fleet (``sandbox_fleet``'s, without the bots' rows): every
# inventory read and deposit asks, so it is written out by hand rather than compiled per call.
_FLEET_STATUSES = (
    f"SELECT DISTINCT COALESCE(s.{_STATE}, %s) FROM {_BOTS.table('b')}"  # noqa: S608
    f" LEFT JOIN {_STATES.table('s')} ON s.{_STATE_BOT} = b.{_BOT_ID} AND s.{_STATE_MERCHANT} = %s"
)


def _configured(tenant: str, platform_id: str) -> SandboxPlatformUser | None:
    return SandboxPlatformUser.objects.filter(merchant_id=tenant, platform_id=platform_id).first()


def _raise_fault(config: SandboxPlatformUser | None) -> None:
    if config is not None and config.fault:
        raise FAULTS[config.fault](f"sandbox fault {config.fault} for {config.platform_id}")


def _state(config: SandboxPlatformUser) -> TradeUrlState:
    if config.trade_url_state:
        return TradeUrlState(config.trade_url_state)
    if config.economy_ban == "banned":
        return TradeUrlState.BANNED
    if config.inventory_private:
        return TradeUrlState.INVENTORY_PRIVATE
    if config.anti_cheat_banned:
        return TradeUrlState.GAME_730_BANNED
    return TradeUrlState.NORMAL


class SandboxPlatform:
    def user(self, platform_id: str, *, tenant: str, trade_url: str = "") -> PlatformUser:
        config = _configured(tenant, platform_id)
        _raise_fault(config)
        if config is None:
            return PlatformUser(platform_id=platform_id, state=TradeUrlState.NORMAL)
        return PlatformUser(
            platform_id=platform_id,
            state=_state(config),
            anti_cheat_banned=config.anti_cheat_banned,
            game_bans=config.game_bans,
            economy_ban=config.economy_ban,
            escrow_days=config.escrow_days,
        )

    def inventory(self, platform_id: str, game: int, *, tenant: str) -> list[InventoryAsset]:
        config = _configured(tenant, platform_id)
        _raise_fault(config)
        if config is not None and config.trade_url_state == TradeUrlState.PLATFORM_UNAVAILABLE:
            raise PlatformUnavailableError("platform unavailable")
        return held_inventory(config, platform_id, game, tenant=tenant)

    def fleet_status(self, *, tenant: str) -> str:
        with connection.cursor() as cursor:
            cursor.execute(
                _FLEET_STATUSES,
                [SandboxBotState.Status.ONLINE.value, _STATES.param("merchant", tenant)],
            )
            statuses = {status for (status,) in cursor.fetchall()}
        for status in (FleetStatus.ONLINE, FleetStatus.DEGRADED):
            if status in statuses:
                return status
        return FleetStatus.OFFLINE

    def offer_create(
        self,
        *,
        tenant: str,
        key: str,
        platform_id: str,
        trade_url: str,
        game: int,
        assets: list[OfferAsset],
    ) -> TradeOffer:
        existing = SandboxOffer.objects.select_related("bot").filter(key=key).first()
        if existing is not None:
            return _offer(existing)
        self._offer_refusal_check(tenant, platform_id, game, assets)
        return self._offer_make(tenant, key, platform_id, assets, bot_platform_id="")

    def offer_deliver(
        self,
        *,
        tenant: str,
        key: str,
        platform_id: str,
        trade_url: str,
        game: int,
        assets: list[OfferAsset],
        bot_platform_id: str,
    ) -> TradeOffer:
        """The bot holding the items offers them: made by the bot named when it is online in
        the tenant's world, else refused for now (the items are in that bot's inventory)."""
        existing = SandboxOffer.objects.select_related("bot").filter(key=key).first()
        if existing is not None:
            return _offer(existing)
        user = self.user(platform_id, tenant=tenant)
        if not user.can_trade:
            raise OfferRefusedError("USER_NOT_TRADEABLE")
        return self._offer_make(tenant, key, platform_id, assets, bot_platform_id=bot_platform_id)

    def _offer_make(
        self,
        tenant: str,
        key: str,
        platform_id: str,
        assets: list[OfferAsset],
        *,
        bot_platform_id: str,
    ) -> TradeOffer:
        online = sandbox_fleet(tenant=tenant).filter(status=SandboxBotState.Status.ONLINE)
        if bot_platform_id:
            online = online.filter(platform_id=bot_platform_id)
        bots = list(online)
        if not bots:
            raise PlatformUnavailableError("no bot online to make the offer")
        digest = hashlib.sha256(key.encode()).hexdigest()
        try:
            with transaction.atomic():
                offer = SandboxOffer.objects.create(
                    offer_id=str(int(digest[:12], 16) % 10**10).zfill(10),
                    key=key,
                    bot=bots[int(digest[12:16], 16) % len(bots)],
                    platform_id=platform_id,
                    assets=[{"assetId": a.asset_id, "amount": a.amount} for a in assets],
                    state=SandboxOffer.State.NEEDS_CONFIRMATION,
                    created_at=clock.now(),
                )
        except IntegrityError:
            return _offer(SandboxOffer.objects.select_related("bot").get(key=key))
        return _offer(offer)

    def offer_confirm(self, *, tenant: str, offer_id: str) -> TradeOffer:
        offer = SandboxOffer.objects.select_related("bot").filter(offer_id=offer_id).first()
        if offer is None:
            raise OfferRefusedError("OFFER_NOT_FOUND", f"no offer {offer_id}")
        if offer.state == SandboxOffer.State.NEEDS_CONFIRMATION:
            online = sandbox_fleet(tenant=tenant).filter(
                pk=offer.bot_id, status=SandboxBotState.Status.ONLINE
            )
            if not online.exists():
                raise PlatformUnavailableError(f"bot {offer.bot.name} cannot confirm now")
            offer.state = SandboxOffer.State.SENT
            offer.save(update_fields=["state"])
        return _offer(offer)

    def pollers(self) -> list[str]:
        """Nothing to poll: the sandbox's events and autopilot move trades themselves."""
        return []

    def offer_updates(self, *, poller: str) -> list[OfferUpdate]:
        return []

    def offer_update_seen(self, *, update: OfferUpdate) -> None:
        return None

    def _offer_refusal_check(
        self, tenant: str, platform_id: str, game: int, assets: list[OfferAsset]
    ) -> None:
        """What the platform refuses an offer for, as it would: the owner's state now and the
        assets still being in the inventory."""
        user = self.user(platform_id, tenant=tenant)
        if user.escrow_days > 0:
            raise OfferRefusedError("USER_ESCROW")
        if user.state == TradeUrlState.INVENTORY_PRIVATE:
            raise OfferRefusedError("USER_INVENTORY_PRIVATE")
        if not user.can_trade:
            raise OfferRefusedError("USER_NOT_TRADEABLE")
        held = {
            asset.asset_id: asset.amount
            for asset in self.inventory(platform_id, game, tenant=tenant)
            if asset.tradable
        }
        for wanted in assets:
            if held.get(wanted.asset_id, 0) < wanted.amount:
                raise OfferRefusedError("ITEMS_UNAVAILABLE", f"asset {wanted.asset_id} is gone")


def original_inventory(
    config: SandboxPlatformUser | None, platform_id: str, game: int
) -> list[InventoryAsset]:
    """The user's inventory before any trade moved an asset: configured, or generated."""
    if config is not None and config.inventory is not None:
        return [
            _configured_asset(platform_id, game, n, raw)
            for n, raw in enumerate(config.inventory)
            if raw.get("game", CS_GAME) == game
        ]
    return generated_inventory(platform_id, game)


def held_inventory(
    config: SandboxPlatformUser | None, platform_id: str, game: int, *, tenant: str
) -> list[InventoryAsset]:
    """What the user holds after the trades of its world: its original inventory, with what
    withdrawals delivered to it (tradable once their hold is over) and without what its
    completed deposits gave the bots (a stack loses those units). A deposit's asset leaves when
    the deposit completes: until then it is the deposit's, and a reversal leaves it where it
    was. A user a merchant configured lives in that merchant's world only; a generated user in
    the world every merchant shares, as an asset exists once on the real platform."""
    trades = _world_trades(config, platform_id, tenant)
    held = {asset.asset_id: asset for asset in original_inventory(config, platform_id, game)}
    now = clock.now()
    delivered = TradeItem.objects.filter(
        trade__in=trades.filter(type=Trade.Type.WITHDRAW, client_platform_id=platform_id),
        appid=game,
        status__in=(Status.HOLD, Status.COMPLETED),
    )
    for item in delivered:
        asset = _delivered_asset(item, game)
        tradable = item.status == Status.COMPLETED or (
            item.hold_end_date is not None and item.hold_end_date <= now
        )
        held[asset.asset_id] = replace(asset, tradable=tradable)
    given = TradeItem.objects.filter(
        trade__in=trades.filter(type=Trade.Type.DEPOSIT),
        asset_owner=platform_id,
        appid=game,
        status=Status.COMPLETED,
    ).values_list("public_id", "amount")
    for item_id, amount in given:
        asset_id = item_id.split("_", 1)[1]
        left = held.get(asset_id)
        if left is not None and left.amount > amount:
            held[asset_id] = replace(left, amount=left.amount - amount)
        else:
            held.pop(asset_id, None)
    return list(held.values())


def _world_trades(
    config: SandboxPlatformUser | None, platform_id: str, tenant: str
) -> QuerySet[Trade]:
    if config is not None:
        return Trade.objects.filter(merchant_id=tenant)
    configuring = SandboxPlatformUser.objects.filter(platform_id=platform_id)
    return Trade.objects.exclude(merchant_id__in=configuring.values("merchant_id"))


# A delivered item is a new asset of its recipient; its id is above the generated ones.
_DELIVERED_ASSET_IDS = 100_000_000_000


def _delivered_asset(item: TradeItem, game: int) -> InventoryAsset:
    return InventoryAsset(
        asset_id=str(_DELIVERED_ASSET_IDS + item.pk),
        game=game,
        market_hash_name=str((item.details or {}).get("marketHashName") or item.catalog_id),
        amount=item.amount,
        phase=item.phase,
    )


def _offer(row: SandboxOffer) -> TradeOffer:
    return TradeOffer(
        offer_id=row.offer_id,
        bot=BotInfo(name=row.bot.name, avatar=row.bot.avatar, platform_id=row.bot.platform_id),
        sent=row.state == SandboxOffer.State.SENT,
    )


def _asset_id(platform_id: str, game: int, position: int) -> str:
    return str(
        10_000_000_000 + (int(platform_id) * 7919 + game * 31 + position * 104_729) % 89_999_999_999
    )


def _configured_asset(
    platform_id: str, game: int, position: int, raw: dict[str, Any]
) -> InventoryAsset:
    wear = raw.get("wear")
    phase = raw.get("phase", "")
    return InventoryAsset(
        asset_id=str(raw.get("assetId") or _asset_id(platform_id, game, position)),
        game=game,
        market_hash_name=raw["marketHashName"],
        amount=int(raw.get("amount", 1)),
        tradable=bool(raw.get("tradable", True)),
        wear=Decimal(str(wear)) if wear is not None else None,
        phase=phase,
        paint_index=_paint_index(game, raw["marketHashName"], phase) if phase else None,
    )


def _paint_index(game: int, market_hash_name: str, phase: str) -> int | None:
    """A configured phased asset carries its phase's paint index, as the catalog knows it."""
    index: int | None = (
        CatalogPhase.objects.filter(
            item__game=game, item__market_hash_name=market_hash_name, phase=phase
        )
        .values_list("paint_index", flat=True)
        .first()
    )
    return index


def generated_inventory(platform_id: str, game: int) -> list[InventoryAsset]:
    """The same items for the same platform id, every time."""
    rng = Random(f"inventory:{platform_id}:{game}")  # noqa: S311 (sandbox data, not security)
    size = rng.randint(8, 40) if game == CS_GAME else rng.randint(5, 30)
    return [_generated_asset(rng, platform_id, game, position) for position in range(size)]


def _generated_asset(rng: Random, platform_id: str, game: int, position: int) -> InventoryAsset:
    entry = catalog_entry(game, rng.randrange(INVENTORY_NAME_SPACE))
    asset_id = _asset_id(platform_id, game, position)
    if game != CS_GAME:
        amount = rng.randint(2, 500) if entry.stackable else 1
        return InventoryAsset(
            asset_id=asset_id,
            game=game,
            market_hash_name=entry.market_hash_name,
            amount=amount,
            tradable=rng.random() < 0.95,
        )
    _, low, high, _ = next(e for e in EXTERIORS if e[0] == entry.exterior)
    wear = (low + (high - low) * Decimal(rng.random())).quantize(Decimal("0.0000000001"))
    phase, paint_index = rng.choice(entry.phases) if entry.phases else ("", None)
    return InventoryAsset(
        asset_id=asset_id,
        game=game,
        market_hash_name=entry.market_hash_name,
        tradable=rng.random() < 0.95,
        wear=wear,
        paint_seed=rng.randint(0, 1000),
        phase=phase,
        paint_index=paint_index,
        stickers=stickers(rng),
        charm=charm(rng) if rng.random() < 0.1 else None,
        prop_id=str(rng.randint(10**9, 10**10)) if rng.random() < 0.5 else "",
        preview_token=f"{rng.getrandbits(32):08x}" if rng.random() < 0.5 else "",
    )
