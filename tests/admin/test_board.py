"""The console's home over HTTP: every section is there, a trade counts as waiting too long once
it has not moved for longer than its kind and state's threshold (from the settings) and not a
moment before, merchants' webhook trouble is counted per merchant, and the wallet's last check
is shown with its age (never run, clean, broken, stale)."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from core import clock
from core.admin_board import AttentionRow, board_build
from merchants.models import Merchant
from merchants.webhooks.models import WebhookEvent
from tests.admin.desk import Trades
from trading.models import Trade
from wallet.models import Account

pytestmark = pytest.mark.django_db

SECTIONS = ["trades", "webhooks", "bots", "suppliers", "cashouts", "scanners", "wallet"]


def rows(slug: str) -> dict[str, AttentionRow]:
    [part] = [part for part in board_build() if part.slug == slug]
    return {row.label: row for row in part.rows}


def test_the_home_is_the_board_with_every_section(admin_client):
    page = admin_client.get("/admin/").content.decode()

    assert 'id="attention-board"' in page
    for slug in SECTIONS:
        assert f'id="board-{slug}"' in page, slug
    assert [part.slug for part in board_build()] == SECTIONS
    assert "Every page" in page  # Django's list of pages stays, under the board


def test_a_trade_waits_too_long_only_past_its_threshold(settings, trades: Trades):
    """Alice's buy is pending (bought, waiting for the seller): 2 hours expected by default,
    here 30 minutes; it last moved at ``moved``."""
    settings.CONSOLE_EXPECTED_MINUTES = {
        **settings.CONSOLE_EXPECTED_MINUTES,
        "withdraw.pending": 30,
    }
    moved = clock.now() - timedelta(minutes=30)
    Trade.objects.filter(pk=trades.alice_buy.pk).update(updated_at=moved + timedelta(seconds=5))
    assert rows("trades")["Withdrawals pending"].count == 0

    Trade.objects.filter(pk=trades.alice_buy.pk).update(updated_at=moved - timedelta(seconds=5))
    pending = rows("trades")["Withdrawals pending"]

    assert (pending.count, pending.alert) == (1, True)
    assert pending.url == "/admin/trading/trade/?overdue=withdraw.pending"
    assert "over 30 min without a move" in pending.note
    assert rows("trades")["Deposits pending"].count == 0  # a threshold per kind and state


def test_the_list_a_count_opens_holds_exactly_its_trades(admin_client, settings, trades):
    settings.CONSOLE_EXPECTED_MINUTES = {**settings.CONSOLE_EXPECTED_MINUTES, "deposit.active": 5}
    an_hour_ago = clock.now() - timedelta(hours=1)
    Trade.objects.filter(pk=trades.alice_deposit.pk).update(updated_at=an_hour_ago)

    page = admin_client.get("/admin/trading/trade/", {"overdue": "deposit.active"})

    assert list(page.context["cl"].result_list) == [trades.alice_deposit]
    assert rows("trades")["Deposits active"].count == 1  # Bob's sell moved just now


def test_webhook_trouble_is_counted_per_merchant(alice, bob, trades):
    Merchant.objects.filter(pk=bob.merchant.pk).update(callback_disabled_at=timezone.now())
    events = WebhookEvent.objects.filter(merchant=alice.merchant)
    a_week_ago = clock.now() - timedelta(days=7)
    failed = list(events.values_list("pk", flat=True)[:3])
    # Two given up on lately, one long ago (outside CONSOLE_WEBHOOK_FAILED_DAYS): one merchant.
    WebhookEvent.objects.filter(pk__in=failed[:2]).update(status=WebhookEvent.Status.FAILED)
    WebhookEvent.objects.filter(pk=failed[2]).update(
        status=WebhookEvent.Status.FAILED, created_at=a_week_ago
    )

    found = rows("webhooks")

    assert found["given up on lately"].count == 1
    assert found["callback disabled (410 Gone)"].count == 1
    assert found["retrying a failed delivery"].count == 0
    WebhookEvent.objects.filter(pk__in=failed[:2]).update(created_at=a_week_ago)
    assert rows("webhooks")["given up on lately"].count == 0


def test_the_wallet_row_tells_never_clean_broken_and_stale(settings, trades):
    [never] = rows("wallet").values()
    assert (never.value, never.alert) == ("never run", True)

    call_command("check_wallet")
    [clean] = rows("wallet").values()
    assert (clean.value, clean.alert) == ("clean", False)

    settings.WALLET_CHECK_SECONDS = 0  # beat's period passed twice since: is beat running?
    [stale] = rows("wallet").values()
    assert stale.alert
    assert "is beat running?" in stale.note

    settings.WALLET_CHECK_SECONDS = 3600
    available = Account.objects.get(merchant=trades.alice_buy.merchant, kind="available")
    with connection.cursor() as cursor:  # a balance drifting from its postings
        cursor.execute(
            "UPDATE wallet_account SET balance = balance + 1 WHERE id = %s", [available.pk]
        )
    with pytest.raises(CommandError, match="invariants broken"):
        call_command("check_wallet")
    [broken] = rows("wallet").values()
    assert (broken.value, broken.alert) == ("BROKEN (1 problems)", True)
