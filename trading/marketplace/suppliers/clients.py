"""The supplier clients this deployment has: each supplier named in ``MARKETPLACE_SUPPLIERS``
that has its credentials, with its host and timeouts from the settings (read on each call, so a
test can point a supplier at its recorded server)."""

from functools import cache

from django.conf import settings

from trading.marketplace.suppliers.base import SupplierClient
from trading.marketplace.suppliers.dmarket import DMarketClient
from trading.marketplace.suppliers.http import SupplierHttp
from trading.marketplace.suppliers.waxpeer import WaxpeerClient


def supplier_names() -> list[str]:
    """The suppliers configured (named and with credentials)."""
    return list(supplier_clients())


SUPPLIER_MARKETPLACE = "trading.marketplace.suppliers.marketplace.SupplierMarketplace"


def supplier_clients() -> dict[str, SupplierClient]:
    """None unless the deployment's marketplace is this one (the sandbox's world polls no one)."""
    if settings.MARKETPLACE != SUPPLIER_MARKETPLACE:
        return {}
    return _clients(
        tuple(settings.MARKETPLACE_SUPPLIERS),
        settings.WAXPEER_API_URL,
        settings.WAXPEER_API_KEY,
        settings.DMARKET_API_URL,
        settings.DMARKET_PUBLIC_KEY,
        settings.DMARKET_SECRET_KEY,
        settings.DMARKET_BOT_STEAM_ID,
        float(settings.SUPPLIER_CONNECT_TIMEOUT_SECONDS),
        float(settings.SUPPLIER_READ_TIMEOUT_SECONDS),
    )


@cache
def _clients(
    names: tuple[str, ...],
    waxpeer_url: str,
    waxpeer_key: str,
    dmarket_url: str,
    dmarket_public: str,
    dmarket_secret: str,
    dmarket_bot: str,
    connect_timeout: float,
    read_timeout: float,
) -> dict[str, SupplierClient]:
    """One client per configuration and process (a DMarket client keeps the clock offset it
    learnt)."""
    clients: dict[str, SupplierClient] = {}
    if "waxpeer" in names and waxpeer_key:
        clients["waxpeer"] = WaxpeerClient(
            http=SupplierHttp(waxpeer_url, connect_timeout, read_timeout), api_key=waxpeer_key
        )
    # DMarket without the bot its items arrive at could buy nothing it can hand on.
    if "dmarket" in names and dmarket_public and dmarket_secret and dmarket_bot:
        clients["dmarket"] = DMarketClient(
            http=SupplierHttp(dmarket_url, connect_timeout, read_timeout),
            public_key=dmarket_public,
            secret_key=dmarket_secret,
            bot_steam_id=dmarket_bot,
        )
    return clients
