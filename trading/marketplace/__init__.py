from functools import cache

from core.adapters import adapter_load
from trading.marketplace.base import Marketplace
from trading.marketplace.unconfigured import UnconfiguredMarketplace


@cache
def get_marketplace() -> Marketplace:
    """The supplier marketplace this deployment talks to, named by the MARKETPLACE setting."""
    marketplace: Marketplace = adapter_load("MARKETPLACE", UnconfiguredMarketplace)
    return marketplace
