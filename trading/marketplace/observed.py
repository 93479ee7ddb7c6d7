"""The configured marketplace with its availability in the metrics
(``trading_marketplace_available``): every call that raises MarketplaceUnavailableError sets it
to 0, every other answer to 1, so the alert on suppliers needs no probe of its own."""

from collections.abc import Callable
from typing import Any

from core.metrics import MARKETPLACE_AVAILABLE
from trading.marketplace.base import MarketplaceUnavailableError


class ObservedMarketplace:
    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self._available = MARKETPLACE_AVAILABLE.labels(type(adapter).__name__)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.adapter, name)
        return self._observed(attribute) if callable(attribute) else attribute

    def _observed(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def observed(*args: Any, **kwargs: Any) -> Any:
            try:
                answer = call(*args, **kwargs)
            except MarketplaceUnavailableError:
                self._available.set(0)
                raise
            self._available.set(1)
            return answer

        return observed
