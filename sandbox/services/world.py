"""``POST /sandbox/reset``: the calling merchant's sandbox world back to how it starts."""

from django.db import transaction

from merchants.models import Merchant
from sandbox.models import (
    SandboxAutopilotState,
    SandboxBotState,
    SandboxChain,
    SandboxIdentityProviderState,
    SandboxPlatformUser,
)
from trading.accounts.selectors.inventory import inventory_cache_forget
from trading.accounts.selectors.tradeurls import trade_url_cache_forget

# What the merchant's /sandbox/ helpers configured, one row per setting; without them the world
# is its default (generated users, an online fleet, running chains, the provider and autopilot on).
SETTINGS = (SandboxBotState, SandboxChain, SandboxIdentityProviderState, SandboxAutopilotState)


def sandbox_world_reset(*, merchant: Merchant) -> int:
    """Forget everything the merchant's ``/sandbox/`` helpers configured: its platform users
    (generated again), the bots' status, the chains' switches, the identity provider's outage
    and the autopilot switch. What happened stays (trades, transfers, dossiers, the demo
    receiver's log), and so does the service clock, one for every merchant. Returns how many
    configured platform users were forgotten."""
    with transaction.atomic():
        configured = SandboxPlatformUser.objects.filter(merchant=merchant)
        users = list(configured.values_list("platform_id", flat=True))
        configured.delete()
        for model in SETTINGS:
            model.objects.filter(merchant=merchant).delete()
    for platform_id in users:
        inventory_cache_forget(merchant=merchant, platform_id=platform_id)
        trade_url_cache_forget(merchant=merchant, platform_id=platform_id)
    return len(users)
