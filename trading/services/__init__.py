from trading.services.switches import service_settings_cache_clear, service_settings_update

__all__ = ["service_settings_cache_clear", "service_settings_update"]
