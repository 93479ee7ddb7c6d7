"""The console as support staff see it in a 1400 x 900 window: each list shows a row's status
and amount without scrolling sideways, and the merchant's page answers a call at a glance."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from tests.admin.desk import Trades
from tests.browser.conftest import log_in, wait_for
from tests.crypto.conftest import USER, cashout_body, data, deposit_address, send
from tests.factories import Actor
from tests.withdrawals.conftest import Desk

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

WIDTH, HEIGHT = 1400, 900
PANELS = ("balances", "api-keys", "trades", "webhooks", "risk-policy")
# Each list and the columns that must be on screen in every row.
LISTS = {
    "/admin/trading/trade/": ("status", "total_price"),
    "/admin/crypto/cryptodeposit/": ("status", "amount_usd"),
    "/admin/crypto/cryptowithdrawal/": ("status", "amount"),
    "/admin/ledger/funding/": ("status", "amount_usd"),
    "/admin/merchants/webhookevent/": ("status",),
}
# Where a cell is on the page, and whether it (not the filter column, not nothing) is what a
# person sees at its centre: a cell past the right edge of the list's scroll box is clipped.
PLACE = """
const cell = arguments[0];
const box = cell.getBoundingClientRect();
const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
return {
  left: box.left, right: box.right, top: box.top, bottom: box.bottom,
  window: window.innerWidth,
  width: document.documentElement.clientWidth, height: document.documentElement.clientHeight,
  seen: hit !== null && cell.contains(hit),
  scrolled: window.scrollX !== 0 || document.querySelector('.results').scrollLeft !== 0,
};
"""


@pytest.fixture
def busy_day(desk: Desk, alice: Actor, trades: Trades) -> Trades:
    """Besides the trades: a crypto deposit and a cashout of Alice's (fundings of both), under
    a merchant name as long as real ones get."""
    alice.merchant.name = "Northwind Skins Marketplace Europe Ltd."
    alice.merchant.save(update_fields=["name"])
    address = deposit_address(desk, alice, "ETH")["address"]
    data(send(desk, alice, "ETH", address, "20", confirmations=12))
    data(desk.post("/secure/crypto/withdraw", cashout_body(platformId=USER), headers=alice.headers))
    return trades


def on_screen(browser: WebDriver, cell: WebElement, first_row: bool) -> None:
    place = browser.execute_script(PLACE, cell)
    place["class"] = cell.get_attribute("class")
    place["url"] = browser.current_url
    assert place["window"] == WIDTH, place
    assert place["left"] >= 0, place
    assert place["right"] <= place["width"], place
    assert not place["scrolled"], place
    if first_row:  # below the fold only the horizontal position matters
        assert place["bottom"] <= place["height"], place
        assert place["seen"], place


def test_each_list_shows_status_and_amount_at_1400_px(browser, live_server, staff, busy_day):
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")

    for path, columns in LISTS.items():
        browser.get(f"{live_server.url}{path}")
        wait_for(browser, "#result_list")
        for column in columns:
            cells = browser.find_elements(By.CSS_SELECTOR, f"#result_list td.field-{column}")
            assert cells, f"{path}: no {column} column"
            for row, cell in enumerate(cells):
                on_screen(browser, cell, first_row=row == 0)


def test_the_merchant_page_shows_the_merchant_at_a_glance(
    browser, live_server, staff, alice, trades
):
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, f"/admin/merchants/merchant/{alice.merchant.pk}/change/")

    panels = [wait_for(browser, f"#panel-{slug}") for slug in PANELS]
    assert all(panel.is_displayed() for panel in panels)
    tops = [panel.rect["y"] for panel in panels]
    assert tops == sorted(tops)  # balances first, then keys, trades, webhooks, risk
    available = browser.find_element(By.CSS_SELECTOR, "#panel-balances .balance-available .amount")
    assert available.text == "89.50"
    assert "active" in browser.find_element(By.CSS_SELECTOR, "#panel-api-keys .key-status").text

    browser.find_element(By.CSS_SELECTOR, "#panel-trades tr.recent-trade a").click()
    wait_for(browser, "#trade_form")
    assert browser.current_url == (
        f"{live_server.url}/admin/trading/trade/{trades.alice_buy.pk}/change/"
    )
