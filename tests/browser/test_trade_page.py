"""A trade's page as support staff read it in a real browser, in a sandbox whose clock was moved
on: who, what, how much, its state and age on top; its items by name with where they come from;
one timeline of moves, staff actions, webhooks and money, each with who did it; its webhooks
linked to their pages; no empty field; every time in real time, the service clock beside it."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.admin.desk import Trades
from tests.browser.conftest import HEIGHT, WIDTH, log_in, screenshot, wait_for
from tests.factories import Actor
from tests.withdrawals.conftest import Desk, advance_minutes, sandbox_event
from trading.models import TradeEvent

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

AHEAD_MINUTES = 29


def page_of(browser: WebDriver, base_url: str, trade_id: object) -> None:
    browser.get(f"{base_url}/admin/trading/trade/{trade_id}/change/")
    wait_for(browser, "#trade-summary")


def texts(browser: WebDriver, css: str) -> list[str]:
    return [element.text for element in browser.find_elements(By.CSS_SELECTOR, css)]


@pytest.fixture
def delivered(desk: Desk, alice: Actor, trades: Trades) -> Trades:
    """Alice's buy offered to the recipient, then accepted into its hold, with the sandbox's
    clock moved on between the two: its times straddle the move."""
    sandbox_event(desk, alice, str(trades.alice_buy.pk), "purchased")
    advance_minutes(desk, alice, AHEAD_MINUTES)
    sandbox_event(desk, alice, str(trades.alice_buy.pk), "accepted")
    return trades


def test_a_withdrawal_page_says_who_what_how_much_and_what_happened(
    browser, live_server, staff, delivered
):
    buy = delivered.alice_buy
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")
    page_of(browser, live_server.url, buy.pk)
    screenshot(browser, "trade-page")

    summary = browser.find_element(By.ID, "trade-summary").text
    for shown in ("hold", "Withdrawal (self), 1 item", "10.50 USD", "Alice", "alice-buy"):
        assert shown in summary, shown
    assert "Counter-Strike 2" in summary

    [item] = browser.find_elements(By.CSS_SELECTOR, "#trade-items tr.trade-item")
    assert "AK-47 | Redline (Field-Tested)" in item.find_element(By.CSS_SELECTOR, ".item-name").text
    assert "alice-basket-7" in item.text  # the item's external id
    assert "the sandbox's marketplace" in item.find_element(By.CSS_SELECTOR, ".item-source").text

    timeline = browser.find_element(By.ID, "trade-timeline").text
    for actor in ("merchant", "sandbox", "service", "wallet"):
        assert actor in timeline, actor
    assert "approved · #0 AK-47 | Redline (Field-Tested): initiated → pending" in timeline
    assert "accepted" in timeline
    assert "LOCK" in timeline

    events = browser.find_elements(By.CSS_SELECTOR, "#trade-webhooks tr.trade-webhook td.event a")
    assert [link.text for link in events] == [
        "trade.initiated",
        "trade.pending",
        "trade.active",
        "trade.hold",
    ]
    events[1].click()
    wait_for(browser, "#webhookevent_form")
    assert "trade.pending" in browser.find_element(By.ID, "content").text
    browser.back()
    wait_for(browser, "#trade-summary")

    page = browser.find_element(By.ID, "content").text
    for empty in ("Quick", "Collateral", "Bot info", "Next sequence", "Pre credit"):
        assert empty not in page, empty
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    ), "the page scrolls sideways"


def test_every_time_is_real_time_with_the_service_clock_beside_it(
    browser, live_server, staff, delivered
):
    """Before the clock moved, the two agree; after it, the service clock runs 29 minutes
    ahead, and the page shows the real time with the service clock's reading beside it."""
    buy = delivered.alice_buy
    accepted = TradeEvent.objects.get(trade=buy, kind="accepted")
    approved = TradeEvent.objects.get(trade=buy, kind="approved")
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")
    page_of(browser, live_server.url, buy.pk)

    banner = browser.find_element(By.CSS_SELECTOR, ".sandbox-clock").text
    assert "29 min ahead of real time" in banner
    rows = {
        row.find_elements(By.TAG_NAME, "td")[2].text: row
        for row in browser.find_elements(By.CSS_SELECTOR, "#trade-timeline tbody tr")
    }
    accepted_row = next(row for what, row in rows.items() if what.startswith("accepted"))
    real = accepted_row.find_element(By.CSS_SELECTOR, "time.console-time")
    shown_real = datetime.fromisoformat(real.get_attribute("datetime"))
    assert abs(shown_real - (accepted.created_at - timedelta(minutes=AHEAD_MINUTES))) < timedelta(
        seconds=1
    )
    assert shown_real < timezone.now().astimezone(UTC)  # it happened, in real time, just now
    service = accepted_row.find_element(By.CSS_SELECTOR, ".service-clock").text
    assert service == f"service clock {timezone.localtime(accepted.created_at):%H:%M:%S}"

    approved_row = next(row for what, row in rows.items() if what.startswith("approved"))
    assert not approved_row.find_elements(By.CSS_SELECTOR, ".service-clock")  # before the move
    shown = approved_row.find_element(By.CSS_SELECTOR, "time.console-time")
    assert shown.get_attribute("datetime") == approved.created_at.isoformat()
