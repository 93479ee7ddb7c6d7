"""The game platform when none is configured (``GAME_PLATFORM`` unset outside the sandbox):
every call raises PlatformUnavailableError, so the API answers ``PLATFORM_UNAVAILABLE`` instead
of pretending; ``manage.py check`` warns about it."""

from trading.platform.base import (
    InventoryAsset,
    OfferAsset,
    OfferUpdate,
    PlatformUnavailableError,
    PlatformUser,
    TradeOffer,
)

UNCONFIGURED = "No game platform is configured (GAME_PLATFORM)."


class UnconfiguredPlatform:
    def user(self, platform_id: str, *, tenant: str, trade_url: str = "") -> PlatformUser:
        raise PlatformUnavailableError(UNCONFIGURED)

    def inventory(self, platform_id: str, game: int, *, tenant: str) -> list[InventoryAsset]:
        raise PlatformUnavailableError(UNCONFIGURED)

    def fleet_status(self, *, tenant: str) -> str:
        raise PlatformUnavailableError(UNCONFIGURED)

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
        raise PlatformUnavailableError(UNCONFIGURED)

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
        raise PlatformUnavailableError(UNCONFIGURED)

    def offer_confirm(self, *, tenant: str, offer_id: str) -> TradeOffer:
        raise PlatformUnavailableError(UNCONFIGURED)

    def pollers(self) -> list[str]:
        return []

    def offer_updates(self, *, poller: str) -> list[OfferUpdate]:
        raise PlatformUnavailableError(UNCONFIGURED)

    def offer_update_seen(self, *, update: OfferUpdate) -> None:
        raise PlatformUnavailableError(UNCONFIGURED)
