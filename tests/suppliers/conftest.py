"""The real supplier marketplace against the recorded Waxpeer and DMarket servers."""

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.suppliers.servers import DMarketHandler, Recorded, WaxpeerHandler, dmarket_keys, serve
from tests.withdrawals.conftest import (  # noqa: F401 (fixtures)
    alice_funded,
    bob_funded,
    bob_hooks,
    catalog_item,
    desk,
    hooks,
)
from trading.marketplace import get_marketplace
from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE

WAXPEER_KEY = "wax-test-key"
# The Steam account linked to the DMarket account: one of our bots (tests/steam's bot).
DMARKET_BOT = "76561199100000001"


@dataclass
class Suppliers:
    waxpeer: Recorded
    dmarket: Recorded

    def clock_moved(self, seconds: float) -> None:
        """The suppliers' clocks move with the service's (their timers, DMarket's locks)."""
        self.waxpeer.world.elapsed += seconds
        self.dmarket.world.elapsed += seconds


@pytest.fixture
def suppliers(settings, db) -> Iterator[Suppliers]:
    public, secret = dmarket_keys()
    with (
        serve(WaxpeerHandler, api_key=WAXPEER_KEY) as waxpeer,
        serve(DMarketHandler, public_key=public) as dmarket,
    ):
        settings.MARKETPLACE = SUPPLIER_MARKETPLACE
        settings.MARKETPLACE_SUPPLIERS = ["waxpeer", "dmarket"]
        settings.WAXPEER_API_URL = waxpeer.url
        settings.WAXPEER_API_KEY = WAXPEER_KEY
        settings.DMARKET_API_URL = dmarket.url
        settings.DMARKET_PUBLIC_KEY = public
        settings.DMARKET_SECRET_KEY = secret
        settings.DMARKET_BOT_STEAM_ID = DMARKET_BOT
        settings.SUPPLIER_CONNECT_TIMEOUT_SECONDS = 2.0
        settings.SUPPLIER_READ_TIMEOUT_SECONDS = 1.0
        get_marketplace.cache_clear()
        yield Suppliers(waxpeer, dmarket)
    get_marketplace.cache_clear()
