"""The console's home as support staff use it in a real browser: the attention board counts
what needs a person, and each number opens the list of exactly those rows."""

from decimal import Decimal

import pytest
from django.utils import timezone
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from merchants.models import Merchant
from tests.admin.desk import Trades
from tests.browser.conftest import HEIGHT, WIDTH, log_in, screenshot, wait_for
from tests.browser.test_cashout_review import cashout_in_review, reviewed_merchant
from tests.factories import Actor
from tests.withdrawals.conftest import Desk, advance_minutes
from tests.withdrawals.receiver import Receiver
from trading.models import SteamBot, Supplier
from wallet.services.checks import wallet_check_run

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

# Three hours on: Alice's buy has waited in pending (2 hours expected), her deposit and Bob's
# sell in active (an ignored offer is withdrawn after 15 minutes, 45 expected); the offer-expiry
# sweep has not run.
HOURS_ON = 180


def bots() -> dict[str, SteamBot]:
    made = {}
    for n, (name, state, enabled) in enumerate(
        [
            ("Atlas", SteamBot.State.ONLINE, True),
            ("Boreas", SteamBot.State.SESSION_EXPIRED, True),
            ("Ceto", SteamBot.State.ONLINE, False),
        ]
    ):
        made[name] = SteamBot.objects.create(
            name=f"Bot {name}",
            account_name=f"bot_{name.lower()}",
            steam_id=f"7656119910000{n:04d}",
            games=[730],
            enabled=enabled,
            state=state,
            state_detail="refresh token refused" if state == SteamBot.State.SESSION_EXPIRED else "",
        )
    return made


@pytest.fixture
def attention(
    desk: Desk, alice: Actor, bob: Actor, trades: Trades, bob_hooks: Receiver
) -> dict[str, object]:
    """What a busy morning leaves: trades past their time, a bot whose session expired, a
    supplier down and one low on money, Bob's callback gone (410), a cashout in review, and the
    wallet checked clean."""
    advance_minutes(desk, alice, HOURS_ON)
    made = bots()
    Supplier.objects.create(name="waxpeer", balance=Decimal("35.20"), last_ok_at=timezone.now())
    Supplier.objects.create(name="dmarket", consecutive_failures=4, last_error_at=timezone.now())
    Merchant.objects.filter(pk=bob.merchant.pk).update(callback_disabled_at=timezone.now())
    cashout = cashout_in_review(reviewed_merchant("Carol", bob_hooks.url))
    wallet_check_run()
    return {"bots": made, "cashout": cashout}


def board_row(browser: WebDriver, section: str, label: str):
    rows = browser.find_elements(By.CSS_SELECTOR, f"#board-{section} tr.board-row")
    return next(row for row in rows if row.find_element(By.TAG_NAME, "th").text == label)


def count_of(browser: WebDriver, section: str, label: str) -> str:
    return board_row(browser, section, label).find_element(By.CSS_SELECTOR, ".board-count").text


def open_count(browser: WebDriver, section: str, label: str) -> set[str]:
    """Click the row's number; the rows of the list it opens, by their first linked column."""
    board_row(browser, section, label).find_element(By.CSS_SELECTOR, ".board-count a").click()
    wait_for(browser, "#changelist")
    cells = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody th a")
    return {cell.text for cell in cells}


def test_the_home_counts_what_needs_a_person_and_each_count_opens_its_rows(
    browser, live_server, staff, attention, trades
):
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, "/admin/")
    wait_for(browser, "#attention-board")
    screenshot(browser, "board")

    assert count_of(browser, "trades", "Withdrawals pending") == "1"
    assert count_of(browser, "trades", "Deposits active") == "2"
    assert count_of(browser, "trades", "Withdrawals initiated") == "0"
    assert "board-row-alert" in board_row(browser, "trades", "Withdrawals pending").get_attribute(
        "class"
    )
    assert count_of(browser, "bots", "session expired") == "1"
    assert count_of(browser, "bots", "switched off") == "1"
    assert count_of(browser, "suppliers", "down") == "1"
    assert count_of(browser, "suppliers", "low on money") == "1"
    assert count_of(browser, "webhooks", "callback disabled (410 Gone)") == ("1")
    assert count_of(browser, "cashouts", "in review") == "1"
    assert count_of(browser, "wallet", "last check_wallet") == "clean"
    summary = browser.find_element(By.CSS_SELECTOR, ".board-summary").text
    assert "need a person" in summary

    assert open_count(browser, "trades", "Withdrawals pending") == {str(trades.alice_buy.pk)}
    browser.back()
    wait_for(browser, "#attention-board")
    assert open_count(browser, "trades", "Deposits active") == {
        str(trades.alice_deposit.pk),
        str(trades.bob_sell.pk),
    }
    browser.back()
    wait_for(browser, "#attention-board")
    assert open_count(browser, "bots", "session expired") == {"Bot Boreas"}
    browser.back()
    wait_for(browser, "#attention-board")
    assert open_count(browser, "suppliers", "low on money") == {"waxpeer"}
    browser.back()
    wait_for(browser, "#attention-board")
    assert open_count(browser, "webhooks", "callback disabled (410 Gone)") == {"Bob"}
    browser.back()
    wait_for(browser, "#attention-board")
    assert open_count(browser, "cashouts", "in review") == {attention["cashout"]}
