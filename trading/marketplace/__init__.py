from functools import cache
from typing import cast

from core.adapters import adapter_load
from trading.marketplace.base import Marketplace
from trading.marketplace.observed import ObservedMarketplace
from trading.marketplace.unconfigured import UnconfiguredMarketplace


@cache
def get_marketplace() -> Marketplace:
    """The supplier marketplace this deployment talks to, named by the MARKETPLACE setting (its
    availability recorded in the metrics: ``observed``)."""
    adapter = adapter_load("MARKETPLACE", UnconfiguredMarketplace)
    return cast(Marketplace, ObservedMarketplace(adapter))
