from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from trading.platform.base import GamePlatform


@cache
def get_platform() -> GamePlatform:
    """The game platform this deployment talks to, named by the GAME_PLATFORM setting."""
    platform: GamePlatform = import_string(settings.GAME_PLATFORM)()
    return platform
