"""Trading's sections of the console's home: trades past their state's expected time (by kind
and state), the bots by state, the suppliers switched off, down or low on money. Each row links
to the list filtered to what it counts."""

from datetime import timedelta

from django.conf import settings
from django.urls import reverse

from core import clock
from core.admin_board import AttentionRow, board_section
from core.admin_display import duration
from trading.models import SteamBot, Trade
from trading.selectors.attention import (
    DOWN_AFTER_FAILURES,
    steam_bots_by_state,
    suppliers_down,
    suppliers_low,
    suppliers_switched_off,
    trades_overdue_counts,
)

KINDS = {Trade.Type.WITHDRAW: "Withdrawals", Trade.Type.DEPOSIT: "Deposits"}
# What a bot in each state needs; an online bot needs nothing.
BOT_STATES = {
    SteamBot.State.SESSION_EXPIRED: ("session expired", "log in again"),
    SteamBot.State.OFFLINE: ("offline", "log in again; check its secrets"),
    SteamBot.State.RATE_LIMITED: ("rate limited", "waits until the limit lifts"),
    SteamBot.State.TRADE_BANNED: ("trade banned", "cannot trade: take it out of service"),
}


@board_section(slug="trades", title="Trades past their expected time", position=10)
def overdue_trades() -> list[AttentionRow]:
    trades = reverse("admin:trading_trade_changelist")
    rows = []
    now = clock.now()
    for found in trades_overdue_counts(now=now):
        kind, status = found.key.split(".")
        since = "past the hold's end" if status == "hold" else "without a move"
        note = f"over {duration(timedelta(minutes=found.minutes))} {since}"
        if found.oldest is not None:
            # Waiting is told on the service clock, as the expected times are.
            note += f"; the oldest for {duration(now - found.oldest)}"
        rows.append(
            AttentionRow(
                label=f"{KINDS[Trade.Type(kind)]} {status}",
                count=found.count,
                url=f"{trades}?overdue={found.key}",
                alert=found.count > 0,
                note=note,
            )
        )
    return rows


@board_section(slug="bots", title="Bots", position=30)
def bots() -> list[AttentionRow]:
    counts = steam_bots_by_state()
    listing = reverse("admin:trading_steambot_changelist")
    rows = [
        AttentionRow(
            label="online",
            count=counts[SteamBot.State.ONLINE],
            url=f"{listing}?enabled__exact=1&state__exact=online",
        )
    ]
    for state, (label, need) in BOT_STATES.items():
        rows.append(
            AttentionRow(
                label=label,
                count=counts[state],
                url=f"{listing}?enabled__exact=1&state__exact={state}",
                alert=counts[state] > 0,
                note=need,
            )
        )
    rows.append(
        AttentionRow(
            label="switched off",
            count=counts["disabled"],
            url=f"{listing}?enabled__exact=0",
            note="not used for trades",
        )
    )
    return rows


@board_section(slug="suppliers", title="Suppliers", position=40)
def suppliers() -> list[AttentionRow]:
    listing = reverse("admin:trading_supplier_changelist")
    low = settings.CONSOLE_SUPPLIER_LOW_BALANCE
    return [
        AttentionRow(
            label="switched off",
            count=suppliers_switched_off().count(),
            url=f"{listing}?enabled__exact=0",
            note="no new buys from them",
        ),
        AttentionRow(
            label="down",
            count=(down := suppliers_down().count()),
            url=f"{listing}?attention=down",
            alert=down > 0,
            note=f"{DOWN_AFTER_FAILURES} or more failed calls in a row",
        ),
        AttentionRow(
            label="low on money",
            count=(short := suppliers_low().count()),
            url=f"{listing}?attention=low",
            alert=short > 0,
            note=f"balance under {low} USD as last read",
        ),
    ]
