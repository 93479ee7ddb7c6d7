"""Ops log a bot in again the way a person does in a real browser: from the bot's page, with a
reason, against the recorded Steam; the bot is online afterwards and the action is kept with
the staff member's name and reason."""

import pytest
from selenium.webdriver.common.by import By

from core.models import StaffAction
from tests.browser.conftest import HEIGHT, STAFF, WIDTH, log_in, screenshot, wait_for
from tests.steam.conftest import BOT_ID, bot_row, steam, steam_platform
from tests.steam.recorded import RecordedSteam
from trading.models import SteamBot

__all__ = ["steam", "steam_platform"]

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def test_log_a_bot_in_again_from_its_page(browser, live_server, staff, steam: RecordedSteam):
    bot = bot_row(steam.bot(BOT_ID, "atlas"))
    other = SteamBot.objects.create(
        name="Bot Boreas", account_name="boreas", steam_id="76561199100000002", games=[730]
    )
    SteamBot.objects.filter(pk=bot.pk).update(
        state=SteamBot.State.SESSION_EXPIRED, state_detail="refresh token refused"
    )
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, f"/admin/trading/steambot/{bot.pk}/change/")

    tool = next(
        tool
        for tool in browser.find_elements(By.CSS_SELECTOR, ".object-tools a.staff-action")
        if tool.text.lower() == "log in again"
    )
    tool.click()
    wait_for(browser, "#staff-action-form textarea[name=reason]").send_keys(
        "Session expired overnight; deliveries waiting"
    )
    screenshot(browser, "action-log-in")
    browser.find_element(By.CSS_SELECTOR, "#staff-action-form [name=staff_submit]").click()
    shown = wait_for(browser, "ul.messagelist").text

    assert f"{bot}: online." in shown
    bot.refresh_from_db()
    assert bot.state == SteamBot.State.ONLINE
    assert steam.calls_to("GenerateAccessTokenForApp")  # renewed from its refresh token
    action = StaffAction.objects.get()
    assert (action.user, action.action, action.subject_type, action.subject_id) == (
        STAFF,
        "log_in_bot",
        "steam_bot",
        str(bot.pk),
    )
    assert action.reason == "Session expired overnight; deliveries waiting"
    assert action.detail["state"] == "online"
    history = wait_for(browser, "#staff-history").text  # back on the bot's page
    assert f"{STAFF} log_in_bot Session expired overnight; deliveries waiting" in history
    other.refresh_from_db()
    assert other.state == SteamBot.State.OFFLINE  # the other bot was not touched
