"""The game platform: users, inventories, trade URL states and the bot fleet."""

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import IntEnum, StrEnum
from typing import Any, Protocol


class PlatformError(Exception):
    """The platform could not answer; ``error_key`` is the catalog error to give the caller."""

    error_key = "INVENTORY_FETCH_FAILED"


class PlatformUnavailableError(PlatformError):
    error_key = "PLATFORM_UNAVAILABLE"


class PlatformRateLimitedError(PlatformError):
    error_key = "PLATFORM_RATE_LIMITED"


class OfferRefusedError(PlatformError):
    """The platform will not make this offer; retrying will not help. ``reason`` is the trade
    error the deposit fails with."""

    def __init__(self, reason: str, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason = reason


_FAILURES = ("INVENTORY_FETCH_FAILED", "PLATFORM_UNAVAILABLE", "PLATFORM_RATE_LIMITED")

# The catalog keys each method's failures may carry (``PlatformError.error_key``): a service that
# answers with the failure's own key answers with these (tests/errorflow.py reads them).
ADAPTER_ERRORS: dict[str, tuple[str, ...]] = {
    "user": _FAILURES,
    "inventory": (*_FAILURES, "INVENTORY_PRIVATE"),
    "fleet_status": _FAILURES,
}


class TradeUrlState(IntEnum):
    NORMAL = 1
    GAME_730_BANNED = 2
    GAME_252490_BANNED = 3
    BANNED = 4
    INVENTORY_PRIVATE = 5
    TRADE_URL_INVALID = 6
    USER_NOT_FOUND = 7
    UNKNOWN_ERROR = 8
    USER_NOT_TRADEABLE = 9
    PLATFORM_UNAVAILABLE = 10


STATE_MESSAGES = {
    TradeUrlState.NORMAL: "Normal: the account can trade.",
    TradeUrlState.GAME_730_BANNED: "Game730Banned: anti-cheat ban; no deposits of game 730.",
    TradeUrlState.GAME_252490_BANNED: "Game252490Banned: game ban on game 252490.",
    TradeUrlState.BANNED: "Banned: the account is trade banned.",
    TradeUrlState.INVENTORY_PRIVATE: "InventoryPrivate: the inventory is private.",
    TradeUrlState.TRADE_URL_INVALID: "TradeUrlInvalid: the trade URL token is not valid.",
    TradeUrlState.USER_NOT_FOUND: "UserNotFound: no platform user behind this trade URL.",
    TradeUrlState.UNKNOWN_ERROR: "UnknownError: the platform gave an unexpected answer.",
    TradeUrlState.USER_NOT_TRADEABLE: "UserNotTradeable: the account cannot trade.",
    TradeUrlState.PLATFORM_UNAVAILABLE: "PlatformUnavailable: the platform is down; retry.",
}
# States that can trade at all: game bans block one game's deposits, nothing else.
TRADEABLE_STATES = frozenset(
    {TradeUrlState.NORMAL, TradeUrlState.GAME_730_BANNED, TradeUrlState.GAME_252490_BANNED}
)
# States that say something about the platform, not the user: never cached.
TRANSIENT_STATES = frozenset({TradeUrlState.UNKNOWN_ERROR, TradeUrlState.PLATFORM_UNAVAILABLE})


@dataclass(frozen=True)
class PlatformUser:
    platform_id: str
    state: TradeUrlState
    anti_cheat_banned: bool = False
    game_bans: int = 0
    economy_ban: str = "none"
    escrow_days: int = 0

    @property
    def can_trade(self) -> bool:
        return self.state in TRADEABLE_STATES


@dataclass(frozen=True)
class InventoryAsset:
    asset_id: str
    game: int
    market_hash_name: str
    amount: int = 1
    tradable: bool = True
    wear: Decimal | None = None
    paint_seed: int | None = None
    phase: str = ""
    paint_index: int | None = None
    stickers: list[dict[str, Any]] = field(default_factory=list)
    charm: dict[str, Any] | None = None
    prop_id: str = ""
    preview_token: str = ""


@dataclass(frozen=True)
class BotInfo:
    name: str
    avatar: str
    platform_id: str


@dataclass(frozen=True)
class OfferAsset:
    asset_id: str
    amount: int


@dataclass(frozen=True)
class TradeOffer:
    offer_id: str
    bot: BotInfo
    sent: bool


class OfferEvent(StrEnum):
    """What happened to an offer a bot made, as the domain's trade state machine reads it."""

    SENT = "sent"  # confirmed: live for the partner to accept
    ACCEPTED = "accepted"  # the items moved
    ESCROW = "escrow"  # accepted, the platform holds the items until ``hold_until``
    DECLINED = "declined"
    COUNTERED = "countered"  # the partner answered with an offer of their own (declined)
    EXPIRED = "expired"  # the platform's expiry, or the bot withdrew it at its deadline
    CANCELED = "canceled"  # the bot (or staff on the platform) cancelled it
    INVALID_ITEMS = "invalid_items"  # an item left its owner's inventory
    FAILED = "failed"  # invalid, refused at confirmation, or the trade failed to commit
    REVERSED = "reversed"  # the accepted trade was rolled back (trade protection, support)


@dataclass(frozen=True)
class OfferUpdate:
    """A change of one offer that the domain has not been told of yet. ``key`` is the key the
    domain made the offer under; ``state`` and ``trade_status`` are the platform's own values,
    kept in the audit trail."""

    key: str
    offer_id: str
    event: OfferEvent
    bot: BotInfo
    state: int
    trade_status: int | None = None
    hold_until: datetime | None = None


class FleetStatus:
    ONLINE = "online"
    DEGRADED = "degraded"
    OFFLINE = "offline"


class GamePlatform(Protocol):
    """Every call names its ``tenant``: the id of the merchant it is made for. The real platform
    is one world for every merchant and ignores it; the sandbox keeps one world per merchant
    (its configured users and its bot fleet), so one merchant's tests never change another's."""

    def user(self, platform_id: str, *, tenant: str, trade_url: str = "") -> PlatformUser:
        """The user's trade state; with ``trade_url`` its token is checked too (and the trade
        hold the platform would put on an offer sent with it). Raises PlatformError when the
        platform cannot answer."""

    def inventory(self, platform_id: str, game: int, *, tenant: str) -> list[InventoryAsset]:
        """Raises PlatformError; the caller checks the user's state first."""

    def fleet_status(self, *, tenant: str) -> str:
        """online, degraded or offline: the best state any bot is in."""

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
        """A bot asks the owner (reached through ``trade_url``) for these assets; the offer then
        awaits the bot's confirmation. The same key gives the same offer, never a second one.
        Raises OfferRefusedError (final) or PlatformError (transient: try again later)."""

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
        """The bot holding ``assets`` offers them to the user (a withdrawal's delivery); the
        offer then awaits the bot's confirmation. Same key, same offer; raises like
        offer_create."""

    def offer_confirm(self, *, tenant: str, offer_id: str) -> TradeOffer:
        """The bot confirms the offer and it is sent to the owner. Idempotent; raises like
        offer_create."""

    def pollers(self) -> list[str]:
        """What to poll for offer changes, one task each (the platform's bots); empty where
        the platform reports changes itself (the sandbox's events)."""

    def offer_updates(self, *, poller: str) -> list[OfferUpdate]:
        """The changes of this poller's offers the domain has not been told of (network
        calls: call outside any transaction). Raises PlatformError."""

    def offer_update_seen(self, *, update: OfferUpdate) -> None:
        """The domain applied ``update``: it is not reported again. Database only, called in
        the transaction that applied it."""
