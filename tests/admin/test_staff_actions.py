"""Staff actions over HTTP (Django's test client), for the cases a browser test would spend a
minute on: every action asks for a reason and refuses a blank one, a refused action records
nothing, an action that does not apply says why, a deposit is cancelled only before its offer
is out, and the address a staff member is sent back to stays on this site."""

import pytest
from django.contrib.admin.models import LogEntry

from core.handoffs import HANDOFFS
from core.models import StaffAction
from merchants.webhooks.models import WebhookEvent
from tests.admin.desk import Trades
from tests.deposits.conftest import ak_item, deposit
from tests.withdrawals.conftest import money, ok_data
from trading.deposits.services.store import DEPOSIT_OFFER
from trading.models import Trade
from wallet.selectors import wallet_balances

pytestmark = pytest.mark.django_db


def staff_url(trade: Trade, action: str) -> str:
    return f"/admin/trading/trade/{trade.pk}/staff/{action}/"


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_an_action_asks_for_a_reason_and_a_blank_one_changes_nothing(admin_client, trades):
    buy = trades.alice_buy
    asked = admin_client.get(staff_url(buy, "cancel_trade")).content.decode()
    assert 'name="reason"' in asked
    assert "money goes back to the merchant" in asked

    refused = admin_client.post(staff_url(buy, "cancel_trade"), {"reason": "   "})

    assert refused.status_code == 200
    assert "This field is required." in refused.content.decode()
    assert Trade.objects.get(pk=buy.pk).status == "pending"
    assert not StaffAction.objects.exists()
    assert not LogEntry.objects.exists()


def test_a_refused_action_says_why_and_records_nothing(admin_client, trades):
    """The buy was bought already: nothing waits for a purchase."""
    response = admin_client.post(
        staff_url(trades.alice_buy, "retry_purchase"), {"reason": "just in case"}, follow=True
    )

    [shown] = messages_of(response)
    assert "Nothing of this trade waits for its purchase (it is pending)." in shown
    assert not StaffAction.objects.exists()
    assert not LogEntry.objects.exists()


def test_a_webhook_still_being_delivered_is_not_re_sent(admin_client, trades):
    event = WebhookEvent.objects.filter(subject_id=str(trades.alice_buy.pk)).latest("sequence")
    WebhookEvent.objects.filter(pk=event.pk).update(status=WebhookEvent.Status.PENDING)

    response = admin_client.post(
        f"/admin/merchants/webhookevent/{event.pk}/staff/resend/",
        {"reason": "merchant asked"},
        follow=True,
    )

    assert "The event is still being delivered." in messages_of(response)[0]
    assert not StaffAction.objects.exists()  # rolled back with the refusal


def test_a_deposit_whose_offer_is_out_is_left_to_its_expiry(admin_client, trades):
    deposit_trade = trades.alice_deposit
    assert deposit_trade.status == "active"

    response = admin_client.post(
        staff_url(deposit_trade, "cancel_trade"), {"reason": "owner asked"}, follow=True
    )

    assert "The owner holds the offer" in messages_of(response)[0]
    assert Trade.objects.get(pk=deposit_trade.pk).status == "active"


def test_a_deposit_waiting_for_its_offer_is_cancelled_with_no_money_moved(
    admin_client, desk, owner, alice, hooks, trades, monkeypatch
):
    with monkeypatch.context() as lost:
        lost.setitem(HANDOFFS.bindings, DEPOSIT_OFFER, lambda trade_id: None)  # no bot took it up
        waiting = Trade.objects.get(
            pk=ok_data(deposit(desk, owner, ak_item(5), externalId="alice-stuck"))["id"]
        )
    assert waiting.status == "initiated"
    balances = money(alice)

    with desk.capture(execute=True):
        response = admin_client.post(
            staff_url(waiting, "cancel_trade"), {"reason": "no bot for an hour"}, follow=True
        )

    assert "1 item(s) ended." in messages_of(response)[0]
    waiting.refresh_from_db()
    assert (waiting.status, waiting.error) == ("canceled", "CANCELED_BY_STAFF")
    assert money(alice) == balances
    assert "trade.canceled" in [hook.json["type"] for hook in hooks.received]
    action = StaffAction.objects.get()
    assert (action.action, action.subject_id, action.reason) == (
        "cancel_trade",
        str(waiting.pk),
        "no bot for an hour",
    )
    assert Trade.objects.get(pk=trades.bob_sell.pk).status == "active"  # Bob's untouched


def test_the_page_sends_staff_back_only_to_this_site(admin_client, trades):
    event = WebhookEvent.objects.filter(subject_id=str(trades.alice_buy.pk)).latest("sequence")
    url = f"/admin/merchants/webhookevent/{event.pk}/staff/resend/"
    trade_page = f"/admin/trading/trade/{trades.alice_buy.pk}/change/"

    back = admin_client.post(f"{url}?next={trade_page}", {"reason": "asked"})
    away = admin_client.post(f"{url}?next=https://evil.example/", {"reason": "asked again"})

    assert back.status_code == away.status_code == 302
    assert back["Location"] == trade_page
    assert away["Location"] == f"/admin/merchants/webhookevent/{event.pk}/change/"


def test_an_unknown_row_or_action_is_not_found(admin_client, trades):
    assert (
        admin_client.get("/admin/trading/trade/not-a-uuid/staff/cancel_trade/").status_code == 404
    )
    assert admin_client.get(staff_url(trades.alice_buy, "delete_everything")).status_code == 404


def test_the_list_action_asks_once_for_every_ticked_row(admin_client, trades: Trades):
    """Two trades ticked: one reason, each cancelled through the service, each recorded."""
    rows = [str(trades.alice_buy.pk), str(trades.alice_deposit.pk)]
    bob_before = wallet_balances(merchant=trades.bob_sell.merchant)
    asked = admin_client.post(
        "/admin/trading/trade/", {"action": "cancel_trade", "_selected_action": rows}
    )
    assert asked.status_code == 200
    assert asked.content.decode().count('name="_selected_action"') == 2

    done = admin_client.post(
        "/admin/trading/trade/",
        {
            "action": "cancel_trade",
            "_selected_action": rows,
            "staff_confirm": "yes",
            "reason": "merchant closed",
        },
        follow=True,
    )

    shown = messages_of(done)
    assert any("1 item(s) ended and refunded." in text for text in shown)
    assert any("The owner holds the offer" in text for text in shown)  # the deposit: refused
    assert Trade.objects.get(pk=trades.alice_buy.pk).status == "canceled"
    assert [a.subject_id for a in StaffAction.objects.all()] == [str(trades.alice_buy.pk)]
    assert wallet_balances(merchant=trades.bob_sell.merchant) == bob_before
