from typing import Any

from django.conf import settings
from django.core import checks

from core.adapters import adapter_check


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    return [
        *adapter_check("GAME_PLATFORM", answer="PLATFORM_UNAVAILABLE", check_id="trading.001"),
        *adapter_check("MARKETPLACE", answer="SERVICE_UNAVAILABLE", check_id="trading.002"),
    ]


@checks.register()
def suppliers_check(**kwargs: Any) -> list[checks.CheckMessage]:
    """The supplier marketplace with no supplier that has its credentials buys nothing."""
    from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE, supplier_names

    if settings.MARKETPLACE != SUPPLIER_MARKETPLACE or supplier_names():
        return []
    return [
        checks.Warning(
            "MARKETPLACE is the supplier marketplace but no supplier is configured: the market "
            "stays empty and every buy waits.",
            hint="Set WAXPEER_API_KEY, or DMARKET_PUBLIC_KEY, DMARKET_SECRET_KEY and "
            "DMARKET_BOT_STEAM_ID (MARKETPLACE_SUPPLIERS names which to use).",
            id="trading.W003",
        )
    ]


@checks.register()
def dmarket_bot_check(**kwargs: Any) -> list[checks.CheckMessage]:
    """DMarket's keys without the bot its items arrive at: DMarket is left out."""
    from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE

    if (
        settings.MARKETPLACE != SUPPLIER_MARKETPLACE
        or "dmarket" not in settings.MARKETPLACE_SUPPLIERS
        or not (settings.DMARKET_PUBLIC_KEY and settings.DMARKET_SECRET_KEY)
        or settings.DMARKET_BOT_STEAM_ID
    ):
        return []
    return [
        checks.Warning(
            "DMarket has its keys but no DMARKET_BOT_STEAM_ID: it is not used (what it sells "
            "arrives at the Steam account linked to the DMarket account, which must be our bot).",
            hint="Set DMARKET_BOT_STEAM_ID to the Steam id of that bot (added under Steam bots).",
            id="trading.W004",
        )
    ]
