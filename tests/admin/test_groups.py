"""The console's two groups, made by a migration: support re-sends webhooks, retries purchases
and cancels trades; ops log bots in, sweep addresses, switch suppliers and also re-send and
retry. Neither moves money by hand or decides cashouts. Checked on the permissions and on what
a member of each may do over HTTP."""

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from crypto.models import AddressAllocation
from merchants.models import Merchant
from trading.models import SteamBot, Trade

pytestmark = pytest.mark.django_db

ACTIONS = {
    "merchants.resend_webhook",
    "trading.retry_purchase",
    "trading.cancel_trade",
    "trading.log_in_bot",
    "crypto.sweep_address",
}
NEVER = {
    "ledger.move_money",
    "crypto.change_cryptowithdrawal",
    "crypto.change_cryptodeposit",
    "merchants.change_merchant",
    "merchants.add_apikey",
}


def member(group: str) -> User:
    user = User.objects.create_user(f"{group}-1", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return User.objects.get(pk=user.pk)  # fresh: no cached permissions


def test_support_may_resend_retry_and_cancel_and_read_what_a_call_needs():
    support = member("support")

    assert {p for p in ACTIONS if support.has_perm(p)} == {
        "merchants.resend_webhook",
        "trading.retry_purchase",
        "trading.cancel_trade",
    }
    assert not any(support.has_perm(p) for p in NEVER)
    for model in ("trading.view_trade", "merchants.view_merchant", "merchants.view_webhookevent"):
        assert support.has_perm(model), model
    assert support.has_perm("core.view_staffaction")
    assert not support.has_perm("crypto.view_evmtransaction")


def test_ops_may_log_bots_in_sweep_and_switch_but_not_cancel_trades():
    ops = member("ops")

    assert {p for p in ACTIONS if ops.has_perm(p)} == {
        "merchants.resend_webhook",
        "trading.retry_purchase",
        "trading.log_in_bot",
        "crypto.sweep_address",
    }
    assert ops.has_perm("trading.change_supplier")
    assert ops.has_perm("core.change_servicesettings")
    assert not any(ops.has_perm(p) for p in NEVER)


def test_a_support_member_gets_their_actions_and_no_other_over_http(client, trades):
    client.force_login(member("support"))
    bot = SteamBot.objects.create(name="Bot A", account_name="a", steam_id="76561199100000001")
    allocation = AddressAllocation.objects.create(
        merchant=Merchant.objects.get(pk=trades.alice_buy.merchant_id),
        platform_id="76561197960265729",
        created_at=timezone.now(),
    )

    page = client.get(f"/admin/trading/trade/{trades.alice_buy.pk}/change/").content.decode()
    assert "Cancel the trade" in page
    assert (
        client.get(f"/admin/trading/trade/{trades.alice_buy.pk}/staff/cancel_trade/").status_code
        == 200
    )
    assert client.get(f"/admin/trading/steambot/{bot.pk}/staff/log_in_again/").status_code == 403
    assert (
        client.get(f"/admin/crypto/addressallocation/{allocation.pk}/staff/sweep/").status_code
        == 403
    )
    assert client.get("/admin/ledger/funding/adjust/").status_code == 403
    assert Trade.objects.get(pk=trades.alice_buy.pk).status == "pending"
