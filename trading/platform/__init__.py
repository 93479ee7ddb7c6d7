from functools import cache

from core.adapters import adapter_load
from trading.platform.base import GamePlatform
from trading.platform.unconfigured import UnconfiguredPlatform


@cache
def get_platform() -> GamePlatform:
    """The game platform this deployment talks to, named by the GAME_PLATFORM setting."""
    platform: GamePlatform = adapter_load("GAME_PLATFORM", UnconfiguredPlatform)
    return platform
