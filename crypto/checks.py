from typing import Any

from django.conf import settings
from django.core import checks

from core.adapters import adapter_check


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    if not settings.CRYPTO_ENABLED:
        return []  # deposit addresses and cashouts answer ONCHAIN_DISABLED without asking a chain
    return adapter_check("CRYPTO_CHAINS", answer="ONCHAIN_DISABLED", check_id="crypto.001")
