"""Support's actions on a trade, taken the way a person does in a real browser: from the trade's
page (or its list), a page saying what will happen asks for the reason, the service does it, and
the trade's timeline shows it with the staff member's name and their reason. Each is checked
for its effect (a webhook delivered again, an item bought, money refunded) and for leaving the
other merchant's trades alone."""

from decimal import Decimal

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from core.handoffs import HANDOFFS
from core.models import StaffAction
from tests.admin.desk import Trades
from tests.browser.conftest import HEIGHT, STAFF, WIDTH, log_in, screenshot, wait_for
from tests.crypto.conftest import clean
from tests.factories import Actor, trade_url
from tests.withdrawals.conftest import Desk, make_listing, money, ok_data
from tests.withdrawals.receiver import Receiver
from trading.models import CatalogItem, Trade, TradeItem
from trading.withdrawals.services.lifecycle import PURCHASE

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def trade_page(browser: WebDriver, base_url: str, trade: Trade) -> None:
    browser.get(f"{base_url}/admin/trading/trade/{trade.pk}/change/")
    wait_for(browser, "#trade-summary")


def give_reason(browser: WebDriver, reason: str, shot: str) -> str:
    """On the page asking for it: type the reason, then confirm. Returns the messages."""
    wait_for(browser, "#staff-action-form textarea[name=reason]").send_keys(reason)
    screenshot(browser, shot)
    browser.find_element(By.CSS_SELECTOR, "#staff-action-form [name=staff_submit]").click()
    shown = wait_for(browser, "ul.messagelist").text
    assert not browser.find_elements(By.CSS_SELECTOR, "ul.messagelist li.error"), shown
    return shown


def staff_rows(browser: WebDriver) -> list[str]:
    """The timeline's staff actions, as shown."""
    return [row.text for row in browser.find_elements(By.CSS_SELECTOR, "tr.timeline-staff")]


def click_tool(browser: WebDriver, label: str) -> None:
    tools = browser.find_elements(By.CSS_SELECTOR, ".object-tools a.staff-action")
    next(tool for tool in tools if tool.text.lower() == label.lower()).click()


def test_resend_a_trade_webhook_from_its_page(browser, live_server, staff, trades, hooks):
    buy = trades.alice_buy

    def pending_of_the_buy():
        return [
            hook for hook in hooks.of_type("trade.pending") if str(buy.pk) in hook.body.decode()
        ]

    sent_before = len(pending_of_the_buy())
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")
    trade_page(browser, live_server.url, buy)

    row = next(
        row
        for row in browser.find_elements(By.CSS_SELECTOR, "#trade-webhooks tr.trade-webhook")
        if "trade.pending" in row.text
    )
    row.find_element(By.LINK_TEXT, "Re-send…").click()
    shown = give_reason(browser, "Merchant's endpoint was down; ticket 8812", "action-resend")

    assert "re-sending (same id and body)" in shown
    wait_for(browser, "#trade-summary")  # back on the trade's page
    assert browser.current_url.endswith(f"/admin/trading/trade/{buy.pk}/change/")
    [action] = staff_rows(browser)
    assert f"staff:{STAFF}" in action
    assert "resend webhook" in action
    assert "reason: Merchant's endpoint was down; ticket 8812" in action
    # Delivered again by the (eager) worker: same event id, same body.
    resent = pending_of_the_buy()
    assert len(resent) == sent_before + 1
    assert resent[-1].headers["webhook-id"] == resent[0].headers["webhook-id"]
    assert resent[-1].body == resent[0].body


@pytest.fixture
def lost_purchase(desk: Desk, alice: Actor, ak: CatalogItem, trades: Trades, monkeypatch):
    """An approved withdrawal of Alice whose purchase task was lost (a worker died with it)."""
    listing = make_listing(ak, "12.00")
    with monkeypatch.context() as lost:
        lost.setitem(HANDOFFS.bindings, PURCHASE, lambda trade_id: None)
        body = {
            "tradeUrl": trade_url(42),
            "externalId": "alice-lost-buy",
            "items": [{"itemId": listing.id, "price": Decimal("12.60")}],
        }
        created = ok_data(desk.post("/secure/buy", body, headers=alice.headers))
    trade = Trade.objects.get(pk=created["id"])
    item = TradeItem.objects.get(trade=trade)
    assert (trade.status, item.purchase_ref) == ("pending", "")
    return trade


def test_retry_a_lost_purchase_from_the_trade_page(browser, live_server, staff, lost_purchase):
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")
    trade_page(browser, live_server.url, lost_purchase)

    click_tool(browser, "Retry the purchase")
    assert "nothing is bought twice" in wait_for(browser, ".staff-explanation").text
    shown = give_reason(browser, "Purchase never ran after the worker restart", "action-retry")

    assert "the purchase of 1 item(s) is handed to a worker" in shown
    item = TradeItem.objects.get(trade=lost_purchase)
    assert item.purchase_ref  # bought, once, by the (eager) worker
    [action] = staff_rows(browser)
    assert "retry purchase" in action
    assert "reason: Purchase never ran after the worker restart" in action
    assert StaffAction.objects.get().detail == {"items": [item.public_id]}


def test_cancel_a_trade_from_the_list_refunds_it_and_says_why(
    browser, live_server, staff, trades, alice, bob, bob_hooks: Receiver
):
    buy = trades.alice_buy
    before = money(alice)["available"]
    bob_before = money(bob)
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/trading/trade/")

    wait_for(browser, f"input.action-select[value='{buy.pk}']").click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("cancel_trade")
    browser.find_element(By.CSS_SELECTOR, "button[name=index]").click()
    assert "money goes back" in wait_for(browser, ".staff-explanation").text
    shown = give_reason(browser, "Recipient's account was banned (ticket 9020)", "action-cancel")

    assert "1 item(s) ended and refunded" in shown
    buy.refresh_from_db()
    assert buy.status == "canceled"
    assert money(alice)["available"] == before + Decimal("10.50")
    assert money(bob) == bob_before
    trade_page(browser, live_server.url, buy)
    timeline = browser.find_element(By.ID, "trade-timeline").text
    assert (
        f"staff:{STAFF} force cancel · #0 AK-47 | Redline (Field-Tested): pending → canceled"
        in (timeline)
    )
    [action] = staff_rows(browser)
    assert "reason: Recipient's account was banned (ticket 9020)" in action
    screenshot(browser, "action-cancel-done")
    assert clean()


def test_support_without_the_permission_gets_no_button_and_no_page(
    browser, live_server, trades, db
):
    """A member of the support group may re-send, retry and cancel; one who may only look at
    trades is offered none of it, and the action's address answers 403."""
    from django.contrib.auth.models import Permission, User

    from tests.browser.conftest import PASSWORD

    viewer = User.objects.create_user(STAFF, "viewer@example.com", PASSWORD, is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename="view_trade"))
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")
    trade_page(browser, live_server.url, trades.alice_buy)

    assert not browser.find_elements(By.CSS_SELECTOR, ".object-tools .staff-action")
    browser.get(f"{live_server.url}/admin/trading/trade/{trades.alice_buy.pk}/staff/cancel_trade/")
    assert '"key":"FORBIDDEN"' in browser.page_source
    assert Trade.objects.get(pk=trades.alice_buy.pk).status == "pending"
