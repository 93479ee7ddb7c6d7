"""The checks in front of a deposit: the per-client guard (how many deposits a user may have in
flight), the owner's account as the platform sees it now, and which assets are already taken by
a live deposit."""

from math import ceil

from core import clock
from core.errors import DomainError
from core.metrics import RATE_LIMIT_REFUSALS
from merchants.models import Merchant
from trading.accounts.selectors.inventory import USER_STATE_ERRORS
from trading.accounts.shapes import bans_json
from trading.deposits.selectors import (
    MAX_ACTIVE_DEPOSITS,
    MAX_RECENT_DEPOSITS,
    RECENT_WINDOW,
    deposit_free_units,
    deposit_guard_count,
)
from trading.games import CS_GAME
from trading.platform import get_platform
from trading.platform.base import STATE_MESSAGES, PlatformError, TradeUrlState


def deposit_guard_key(*, merchant: Merchant, platform_id: str) -> str:
    return f"deposit-guard:{merchant.pk}:{platform_id}"


def deposit_guard_check(*, merchant: Merchant, platform_id: str) -> None:
    """At most 5 active deposits and 10 per rolling 5 minutes of real time per merchant and
    platform id. The deposits' times are service time, which any merchant's advance of the
    sandbox clock moves: the window is told in service time through the clock's shifts, so an
    advance never reopens it (docs/decisions.md, "Clocks")."""
    real_now = clock.real_now()
    shifts = clock.clock_shifts()
    since = shifts.service_time_at(real_now - RECENT_WINDOW)
    count = deposit_guard_count(merchant=merchant, platform_id=platform_id, since=since)
    if count.active >= MAX_ACTIVE_DEPOSITS:
        raise DomainError("TOO_MANY_ACTIVE_TRADES")
    if count.recent >= MAX_RECENT_DEPOSITS:
        assert count.oldest_recent is not None
        frees_at = shifts.real(count.oldest_recent) + RECENT_WINDOW
        wait = max(1, ceil((frees_at - real_now).total_seconds()))
        RATE_LIMIT_REFUSALS.labels("deposit_guard").inc()
        raise DomainError(
            "RATE_LIMITED",
            f"At most {MAX_RECENT_DEPOSITS} deposits per 5 minutes for this user.",
            retry_after=wait,
        )


def deposit_owner_check(
    *, merchant: Merchant, platform_id: str, game: int, trade_url: str = ""
) -> None:
    """The owner's account can give items of this game now (asked afresh, never cached)."""
    try:
        user = get_platform().user(platform_id, tenant=str(merchant.pk), trade_url=trade_url)
    except PlatformError as exc:
        raise DomainError(exc.error_key) from exc
    if user.state == TradeUrlState.TRADE_URL_INVALID:
        raise DomainError("INVALID_TRADEURL", STATE_MESSAGES[user.state])
    not_tradeable = user.state in (TradeUrlState.BANNED, TradeUrlState.USER_NOT_TRADEABLE)
    if not_tradeable or (game == CS_GAME and user.anti_cheat_banned):
        raise DomainError("USER_NOT_TRADEABLE", details=bans_json(user))
    if user.state in USER_STATE_ERRORS:
        raise DomainError(USER_STATE_ERRORS[user.state])
    if user.escrow_days > 0:
        raise DomainError(
            "ESCROW_NOT_ALLOWED", f"Trades with this account are held {user.escrow_days} days."
        )


def deposit_busy_item_ids(*, platform_id: str, held: dict[str, int]) -> list[str]:
    """Items every unit of which is already in a live deposit (the one rule of a busy asset)."""
    return sorted(set(held) - set(deposit_free_units(platform_id=platform_id, held=held)))


def items_refused(key: str, item_ids: list[str], message: str) -> DomainError:
    return DomainError(key, message, details={"items": item_ids})


def assets_busy(item_ids: list[str]) -> DomainError:
    message = f"Already in a deposit that has not ended: {', '.join(item_ids)}."
    return items_refused("DEPOSIT_IN_PROGRESS", item_ids, message)
