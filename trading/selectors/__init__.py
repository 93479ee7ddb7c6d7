from trading.selectors.switches import game_settings_get

__all__ = ["game_settings_get"]
