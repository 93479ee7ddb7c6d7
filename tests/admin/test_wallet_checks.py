"""Every run of the wallet's invariant check is kept, whoever runs it (``check_wallet``, beat's
``wallet.check_invariants``), with what it found and how long it took, and only the newest
``KEPT_RUNS``; the accounts' list shows the last one instead of checking on every view."""

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection

from wallet.models import Account, WalletCheck
from wallet.services import checks, wallet_admin_credit
from wallet.tasks import check_invariants

pytestmark = pytest.mark.django_db


def test_the_command_and_beat_both_store_their_run(alice):
    call_command("check_wallet")
    assert check_invariants() is True

    runs = list(WalletCheck.objects.order_by("ran_at"))
    assert [run.is_clean for run in runs] == [True, True]
    assert all(run.problems == {} and run.seconds >= 0 for run in runs)


def test_broken_books_are_stored_by_invariant(alice):
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("5.00"), reason="test")
    available = Account.objects.get(merchant=alice.merchant, kind="available")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE wallet_account SET balance = 7 WHERE id = %s", [available.pk])

    assert check_invariants() is False

    run = WalletCheck.objects.get()
    assert not run.is_clean
    assert list(run.problems) == ["drifted_accounts"]
    assert "balance 7.00" in run.problems["drifted_accounts"][0]


def test_only_the_newest_runs_are_kept(monkeypatch, alice):
    monkeypatch.setattr(checks, "KEPT_RUNS", 2)
    first, _ = checks.wallet_check_run()
    for _ in range(3):
        checks.wallet_check_run()

    assert WalletCheck.objects.count() == 2
    assert not WalletCheck.objects.filter(pk=first.pk).exists()


def test_the_accounts_list_shows_the_last_run_without_checking(admin_client, alice):
    assert "never checked" in admin_client.get("/admin/wallet/account/").content.decode()
    call_command("check_wallet")

    page = admin_client.get("/admin/wallet/account/").content.decode()

    assert "Invariants held at the" in page
    assert WalletCheck.objects.count() == 1  # viewing checked nothing
