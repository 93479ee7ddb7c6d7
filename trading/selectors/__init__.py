from trading.selectors.switches import (
    SETTINGS_CACHE_KEY,
    game_settings_get,
    maintenance_is_on,
    service_settings_get,
)

__all__ = ["SETTINGS_CACHE_KEY", "game_settings_get", "maintenance_is_on", "service_settings_get"]
