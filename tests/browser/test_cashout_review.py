"""Staff decide a cashout in review the way a person does: log in through the admin's login
form in a real browser, tick the cashout in the list, pick the action, press Go."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.utils.text import capfirst
from rest_framework.test import APIClient
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from crypto.models import CryptoWithdrawal, MerchantCryptoPolicy
from tests.browser.conftest import STAFF, log_in, wait_for
from tests.crypto.conftest import USER, cashout_body, clean, data
from tests.factories import Actor, make_actor
from tests.withdrawals.conftest import funded
from tests.withdrawals.receiver import Receiver
from wallet.selectors import wallet_balances

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # Static files come from the apps (the live server's handler); nothing is collected.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

REVIEW_ABOVE_CENTS = 2000
AMOUNT_CENTS = 2500


def reviewed_merchant(name: str, callback_url: str) -> Actor:
    """A verified merchant with 1,000 USD whose cashouts above 20 USD wait for staff."""
    actor = funded(make_actor(name=name), "1000.00", callback_url)
    MerchantCryptoPolicy.objects.create(
        merchant=actor.merchant, withdraw_review_above_cents=REVIEW_ABOVE_CENTS
    )
    return actor


def cashout_in_review(actor: Actor) -> str:
    response = APIClient().post(
        "/secure/crypto/withdraw",
        cashout_body(platformId=USER, amountCents=AMOUNT_CENTS),
        format="json",
        headers=actor.headers,
    )
    created = data(response)
    assert created["status"] == "in_review"
    return created["id"]


@pytest.fixture
def two_in_review(db: None, hooks: Receiver, bob_hooks: Receiver) -> tuple[str, str]:
    """Alice's and Bob's cashouts, both in review; staff act on Alice's only."""
    alice = cashout_in_review(reviewed_merchant("Alice", hooks.url))
    bob = cashout_in_review(reviewed_merchant("Bob", bob_hooks.url))
    return alice, bob


def log_in_to_cashouts(browser: WebDriver, base_url: str) -> None:
    log_in(browser, base_url, "/admin/crypto/cryptowithdrawal/")
    wait_for(browser, "#changelist-form")


def run_action(browser: WebDriver, action: str, withdrawal_id: str) -> str:
    """Tick one cashout, pick the action, press Go; returns the messages shown after it."""
    wait_for(browser, f"input.action-select[value='{withdrawal_id}']").click()
    # The admin's actions.js (a static file) counts the ticked rows.
    assert browser.find_element(By.CSS_SELECTOR, ".action-counter").text == "1 of 2 selected"
    Select(browser.find_element(By.NAME, "action")).select_by_value(action)
    browser.find_element(By.CSS_SELECTOR, "button[name=index]").click()
    messages = wait_for(browser, "ul.messagelist")
    assert not browser.find_elements(By.CSS_SELECTOR, "ul.messagelist li.error")
    return messages.text


def stylesheet_loaded(browser: WebDriver, name: str) -> bool:
    return browser.execute_script(
        "return Array.from(document.styleSheets).some("
        "s => (s.href || '').endsWith(arguments[0]) && s.cssRules.length > 0)",
        name,
    )


def staff_log(withdrawal_id: str) -> LogEntry:
    entry = LogEntry.objects.get(
        content_type=ContentType.objects.get_for_model(CryptoWithdrawal), object_id=withdrawal_id
    )
    assert entry.user.username == STAFF
    assert entry.action_flag == CHANGE
    return entry


def test_staff_approve_a_cashout_in_review_in_the_browser(
    browser, live_server, staff, two_in_review, hooks
):
    approved, untouched = two_in_review

    log_in_to_cashouts(browser, live_server.url)
    assert stylesheet_loaded(browser, "/static/admin/css/base.css")
    shown = run_action(browser, "approve", approved)

    assert capfirst(f"{approved}: Approved.") in shown  # as the admin prints it
    # Approved, then broadcast by the (eager) worker within the same request.
    assert CryptoWithdrawal.objects.get(pk=approved).status == "sent"
    assert "crypto_withdrawal.approved" in [r.json["type"] for r in hooks.received]
    assert staff_log(approved).get_change_message() == f"Approved by {STAFF}."
    assert CryptoWithdrawal.objects.get(pk=untouched).status == "in_review"
    assert not LogEntry.objects.filter(object_id=untouched).exists()
    assert clean()


def test_staff_reject_a_cashout_in_review_in_the_browser(
    browser, live_server, staff, two_in_review
):
    rejected, untouched = two_in_review

    log_in_to_cashouts(browser, live_server.url)
    # The admin asks for no reason: the rejection records who decided.
    shown = run_action(browser, "reject", rejected)

    assert capfirst(f"{rejected}: Rejected.") in shown
    row = CryptoWithdrawal.objects.get(pk=rejected)
    assert (row.status, row.reason, row.reason_detail) == (
        "rejected",
        "STAFF_REJECTED",
        f"rejected by {STAFF}",
    )
    assert wallet_balances(merchant=row.merchant)["available"] == Decimal("1000.00")  # refunded
    assert staff_log(rejected).get_change_message() == f"Rejected by {STAFF}."
    assert CryptoWithdrawal.objects.get(pk=untouched).status == "in_review"
    assert clean()
