"""The game platform when none is configured (``GAME_PLATFORM`` unset outside the sandbox):
every call raises PlatformUnavailableError, so the API answers ``PLATFORM_UNAVAILABLE`` instead
of pretending; ``manage.py check`` warns about it."""

from trading.platform.base import (
    InventoryAsset,
    OfferAsset,
    PlatformUnavailableError,
    PlatformUser,
    TradeOffer,
)

UNCONFIGURED = "No game platform is configured (GAME_PLATFORM)."


class UnconfiguredPlatform:
    def user(self, platform_id: str, *, tenant: str) -> PlatformUser:
        raise PlatformUnavailableError(UNCONFIGURED)

    def inventory(self, platform_id: str, game: int, *, tenant: str) -> list[InventoryAsset]:
        raise PlatformUnavailableError(UNCONFIGURED)

    def fleet_status(self, *, tenant: str) -> str:
        raise PlatformUnavailableError(UNCONFIGURED)

    def offer_create(
        self, *, tenant: str, key: str, platform_id: str, game: int, assets: list[OfferAsset]
    ) -> TradeOffer:
        raise PlatformUnavailableError(UNCONFIGURED)

    def offer_confirm(self, *, tenant: str, offer_id: str) -> TradeOffer:
        raise PlatformUnavailableError(UNCONFIGURED)
