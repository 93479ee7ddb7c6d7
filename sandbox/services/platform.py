"""Writes to the sandbox world, made by the ``/sandbox/`` helpers: each changes the calling
merchant's world only."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet

from core.db import row_upsert
from merchants.models import Merchant
from sandbox.models import SandboxBot, SandboxBotState, SandboxPlatformUser
from sandbox.platform import sandbox_fleet
from trading.accounts.selectors.inventory import inventory_cache_forget
from trading.accounts.selectors.tradeurls import trade_url_cache_forget

if TYPE_CHECKING:
    from sandbox.platform import FleetBot


def sandbox_platform_user_set(
    *,
    merchant: Merchant,
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
    """Configure one platform user in the merchant's world, replacing what was configured
    before."""
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
    user = row_upsert(
        SandboxPlatformUser,
        keys={"merchant": merchant, "platform_id": platform_id},
        values={
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
    inventory_cache_forget(merchant=merchant, platform_id=platform_id)
    trade_url_cache_forget(merchant=merchant, platform_id=platform_id)
    return user


def sandbox_fleet_set(*, merchant: Merchant, status: str) -> QuerySet[FleetBot]:
    """Every bot takes ``status`` in the merchant's world; returns the fleet as it sees it."""
    SandboxBotState.objects.bulk_create(
        [
            SandboxBotState(merchant=merchant, bot_id=bot_id, status=status)
            for bot_id in SandboxBot.objects.values_list("id", flat=True)
        ],
        update_conflicts=True,
        unique_fields=["merchant", "bot"],
        update_fields=["status"],
    )
    return sandbox_fleet(tenant=str(merchant.pk))
