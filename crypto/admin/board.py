"""Crypto's sections of the console's home: how far behind each chain's deposit scanner is, and
the cashouts waiting for the merchant's approval, staff's review or their broadcast."""

from django.conf import settings
from django.urls import reverse

from core import clock
from core.admin_board import AttentionRow, board_section
from core.admin_display import duration
from crypto.chains.solana import solana_served
from crypto.selectors import cashouts_waiting, chain_scan_states, solana_accounts_behind

WAITING_FOR = {
    "awaiting_approval": ("waiting for the merchant's approval", "the approval callback"),
    "in_review": ("in review", "staff approve or reject them"),
    "approved": ("approved, not broadcast", "the broadcast sweep sends them"),
}


@board_section(slug="cashouts", title="Cashouts waiting", position=50)
def cashouts() -> list[AttentionRow]:
    listing = reverse("admin:crypto_cryptowithdrawal_changelist")
    rows = []
    now = clock.now()
    for found in cashouts_waiting(now=now):
        label, by = WAITING_FOR[found.status]
        minutes = settings.CONSOLE_EXPECTED_MINUTES[f"cashout.{found.status}"]
        note = f"{by}; {found.late} over {minutes} min"
        if found.oldest_created_at is not None:
            note += f", the oldest asked {duration(now - found.oldest_created_at)} ago"
        rows.append(
            AttentionRow(
                label=label,
                count=found.count,
                url=f"{listing}?status__exact={found.status}",
                # Staff's own queue needs them whatever its age; the others once late.
                alert=found.count > 0 if found.status == "in_review" else found.late > 0,
                note=note,
            )
        )
    return rows


@board_section(slug="scanners", title="Chain scanners", position=60)
def scanners() -> list[AttentionRow]:
    lag = settings.CONSOLE_SCANNER_LAG_SECONDS
    now = clock.now()
    cursors = reverse("admin:crypto_evmcursor_changelist")
    rows = []
    for state in chain_scan_states():
        if state.last_scan_at is None:
            rows.append(AttentionRow(label=f"{state.chain}", value="not started", url=cursors))
            continue
        idle = now - state.last_scan_at
        behind = state.lag_seconds or 0
        rows.append(
            AttentionRow(
                label=f"{state.chain} behind the head",
                value="unknown" if state.lag_blocks is None else f"{state.lag_blocks} blocks",
                url=cursors,
                alert=behind > lag or idle.total_seconds() > lag,
                note=f"{behind} s of chain time; last step {duration(idle)} ago",
            )
        )
    if solana_served():
        accounts = reverse("admin:crypto_solanatokenaccount_changelist")
        count = solana_accounts_behind(now=now).count()
        rows.append(
            AttentionRow(
                label="SOL deposit accounts behind",
                count=count,
                url=f"{accounts}?scan=behind",
                alert=count > 0,
                note=f"scan overdue by more than {lag} s",
            )
        )
    if not rows:
        rows.append(
            AttentionRow(
                label="real chains served here",
                value="none",
                note="the chains are the sandbox's (or CRYPTO_CHAINS serves none)",
            )
        )
    return rows
