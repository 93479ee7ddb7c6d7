"""Browser tests: Debian's headless Chromium driven by Selenium through its own chromedriver,
against pytest-django's live server (which also serves the admin's static files)."""

import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

# The trades of the staff console's suites (tests/admin/desk.py), made in the deposit suite's
# world: two merchants, a bot, the owner's inventory.
from tests.admin.desk import trades

# The crypto suite's fixtures: eager Celery (tasks run inside the live server's request, as a
# worker would run them) and a real local HTTP receiver per merchant for its webhooks.
from tests.crypto.conftest import _eager_celery, bob_hooks, hooks
from tests.deposits.conftest import ak, alice, bob, bot, cheap, desk, door, knife, owner, world

__all__ = [
    "_eager_celery",
    "ak",
    "alice",
    "bob",
    "bob_hooks",
    "bot",
    "browser",
    "cheap",
    "desk",
    "door",
    "hooks",
    "knife",
    "log_in",
    "owner",
    "screenshot",
    "staff",
    "trades",
    "wait_for",
    "world",
]

STAFF = "staff"
PASSWORD = "correct horse battery staple"

# Where the tests save their pictures of the console (docs/admin.md shows them): none unless
# set, e.g. ADMIN_SCREENSHOTS=docs/admin bin/test tests/browser.
SCREENSHOTS = os.environ.get("ADMIN_SCREENSHOTS", "")
WIDTH, HEIGHT = 1400, 900

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PAGE_SECONDS = 15


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.fail(
            f"Browser tests need {' and '.join(missing)}: "
            "apt-get install -y --no-install-recommends chromium chromium-driver "
            "(.ci/run installs them).",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,1024")
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(PAGE_SECONDS)
    yield driver
    driver.quit()


def wait_for(driver: WebDriver, css: str) -> WebElement:
    """The first element matching ``css`` once the page shows it."""
    return WebDriverWait(driver, PAGE_SECONDS).until(
        lambda d: next(iter(d.find_elements("css selector", css)), False)
    )


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_superuser(STAFF, "staff@example.com", PASSWORD)


def log_in(browser: WebDriver, base_url: str, path: str) -> None:
    """Through the admin's login form, landing on ``path``."""
    browser.get(f"{base_url}/admin/login/?next={path}")
    wait_for(browser, "#id_username").send_keys(STAFF)
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "#login-form [type=submit]").click()
    wait_for(browser, "#content-main")


def screenshot(browser: WebDriver, name: str) -> None:
    """The whole page, as tall as it is, saved as ``<name>.png`` in ``ADMIN_SCREENSHOTS``
    (Chromium's own full-page capture: a headless window is no taller than its screen)."""
    if not SCREENSHOTS:
        return
    metrics = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})  # type: ignore[attr-defined]
    width = browser.get_window_size()["width"]
    height = max(HEIGHT, int(metrics["cssContentSize"]["height"]))
    browser.execute_cdp_cmd(  # type: ignore[attr-defined]
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        shot = browser.execute_cdp_cmd(  # type: ignore[attr-defined]
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
        )
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})  # type: ignore[attr-defined]
    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    (Path(SCREENSHOTS) / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
