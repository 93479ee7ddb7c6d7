from typing import Any

from django.core import checks

from core.adapters import adapter_check


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    return [
        *adapter_check("GAME_PLATFORM", answer="PLATFORM_UNAVAILABLE", check_id="trading.001"),
        *adapter_check("MARKETPLACE", answer="SERVICE_UNAVAILABLE", check_id="trading.002"),
    ]
