"""Writes to the sandbox world, made by the ``/sandbox/`` helpers and the seeder."""

from decimal import Decimal
from typing import Any

from trading.models import SandboxBot, SandboxPlatformUser
from trading.selectors.inventory import inventory_cache_forget
from trading.selectors.tradeurls import trade_url_cache_forget


def sandbox_platform_user_set(
    *,
    platform_id: str,
    trade_url_state: int | None,
    anti_cheat_banned: bool,
    game_bans: int,
    economy_ban: str,
    escrow_days: int,
    inventory_private: bool,
    inventory: list[dict[str, Any]] | None,
    fault: str,
) -> SandboxPlatformUser:
    """Configure one platform user, replacing what was configured before."""
    stored_inventory = (
        [
            {
                **entry,
                "wear": str(entry["wear"]) if isinstance(entry.get("wear"), Decimal) else None,
            }
            for entry in inventory
        ]
        if inventory is not None
        else None
    )
    user, _ = SandboxPlatformUser.objects.update_or_create(
        platform_id=platform_id,
        defaults={
            "trade_url_state": trade_url_state,
            "anti_cheat_banned": anti_cheat_banned,
            "game_bans": game_bans,
            "economy_ban": economy_ban,
            "escrow_days": escrow_days,
            "inventory_private": inventory_private,
            "inventory": stored_inventory,
            "fault": "" if fault == "none" else fault,
        },
    )
    inventory_cache_forget(platform_id=platform_id)
    trade_url_cache_forget(platform_id=platform_id)
    return user


def sandbox_fleet_set(*, status: str) -> list[SandboxBot]:
    SandboxBot.objects.update(status=status)
    return list(SandboxBot.objects.order_by("id"))
