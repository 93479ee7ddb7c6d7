from typing import Any

from django.core import checks

from core.adapters import adapter_check


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    return adapter_check(
        "IDENTITY_PROVIDER", answer="VERIFICATION_NOT_AVAILABLE", check_id="merchants.001"
    )
