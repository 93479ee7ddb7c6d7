"""A long run of deposits through the HTTP API with the Steam adapter against the recorded Steam,
as an operator sees it: a real Celery worker started as the deployment starts it (the adapter
configured by its environment, tests/faults/processes.py), the sweeps and polls beat would send
sent by the test, and time moved at Steam and at the service together, a day at a time, through
the week of CS2 trade protection and the deposit's 8-day hold. Sessions expire every day and
renew from the mobile app's refresh token; the worker is killed and started again midway.

What the operator sees: the trade URL states, the client's inventory (the protected and
owner-only items Steam does not show others left out), the deposits' statuses and webhooks, the
bot online all week after one password login, the merchant credited once for the deposit that
held and nothing for the one its sender reversed under trade protection."""

from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from config.celery import app as celery_app
from core.sealed import seal
from merchants.webhooks.models import WebhookEvent
from tests.factories import Actor, platform_id, trade_url
from tests.faults.database import database_url
from tests.faults.processes import Process, celery_worker, service_env, wait_until
from tests.steam.conftest import AK, BOOT, BOT_ID, ak_assets
from tests.steam.recorded import PROTECTION, Asset, RecordedSteam
from tests.withdrawals.conftest import client_headers, money, wallet_clean
from tests.withdrawals.receiver import Receiver
from trading.models import SteamBot, Trade
from trading.platform.steam import SteamPlatform
from trading.services.bots import steam_bot_log_in
from trading.tasks import poll_offers, sweep_holds

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DAY = 86_400
HOLDER, REVERSER, STRANGER, HIDDEN = 1, 2, 3, 4  # the platform users behind these partners
PRICE = Decimal("36.00")  # alice's deposit price of the AK (40.00 less 10 %)


@pytest.fixture(autouse=True)
def _eager_celery() -> None:
    """Overrides tests.steam.conftest's: tasks go through the broker to the worker."""
    celery_app.conf.task_always_eager = False


@pytest.fixture
def worker(steam: RecordedSteam, settings, tmp_path: Path, transactional_db) -> Iterator[Process]:
    """A solo worker with the Steam adapter, the recorded Steam's hosts and the key that seals
    the bot's secrets (the test process has the same, tests.steam.conftest)."""
    env = service_env(database_url=database_url(), redis_url=django_settings.REDIS_URL)
    env |= {
        "GAME_PLATFORM": settings.GAME_PLATFORM,
        "STEAM_WEB_API_URL": steam.url,
        "STEAM_COMMUNITY_URL": steam.url,
        "STEAM_LOGIN_URL": steam.url,
        "STEAM_BACKOFF_SECONDS": "0",
        "SECRETS_ENCRYPTION_KEYS": settings.SECRETS_ENCRYPTION_KEYS[0],
    }
    process = celery_worker(env, tmp_path / "worker.log").start()
    yield process
    process.stop()


class Run:
    """The operator's side of the run: the HTTP API, beat's tasks, the passing days."""

    def __init__(self, api, alice, steam, worker, clock_advance) -> None:
        self.api: APIClient = api
        self.alice: Actor = alice
        self.steam: RecordedSteam = steam
        self.worker: Process = worker
        self.clock_advance: Callable[[int], None] = clock_advance
        self.partners: dict[str, int] = {}  # trade id -> the partner of its client

    def days_pass(self, days: float) -> None:
        seconds = int(days * DAY)
        self.steam.advance(seconds)
        self.clock_advance(seconds)

    def poll(self, *, until: Callable[[], bool] | None = None) -> None:
        """Beat's poll of the bots' offers, done by the worker: until the bot was asked about
        (and, given ``until``, the changes it found are applied)."""
        before = SteamBot.objects.get(steam_id=BOT_ID).last_poll_at
        poll_offers.delay()
        wait_until(
            lambda: SteamBot.objects.get(steam_id=BOT_ID).last_poll_at != before,
            "the bot's poll",
            alive=[self.worker],
        )
        if until is not None:
            wait_until(until, "the poll's changes applied", alive=[self.worker])

    def check(self, partner: int) -> int:
        response = self.api.post(
            "/secure/check-tradeurl",
            {"tradeurl": trade_url(partner)},
            format="json",
            headers=self.alice.headers,
        )
        assert response.status_code == 200, response.content
        return int(response.json()["data"]["state"])

    def deposit(self, partner: int, asset_ids: list[str]) -> str:
        headers = client_headers(self.api, self.alice, partner)
        listed = self.api.get("/client/inventory", {"game": 730}, headers=headers)
        assert listed.status_code == 200, listed.content
        shown = {item["assetId"] for item in listed.json()["data"]["inventory"]}
        assert set(asset_ids) <= shown
        body = {"items": [{"itemId": f"730_{a}", "price": float(PRICE)} for a in asset_ids]}
        response = self.api.post("/client/trading/deposit", body, format="json", headers=headers)
        assert response.status_code == 200, response.content
        trade_id = str(response.json()["data"]["id"])
        self.partners[trade_id] = partner
        wait_until(lambda: self.status(trade_id) == "active", "the offer live", alive=[self.worker])
        return trade_id

    def status(self, trade_id: str) -> str:
        """The client's view of its trade (a client's trades are not the merchant's own:
        contract 4.10), with a token the merchant's server mints for it now."""
        partner = self.partners[trade_id]
        headers = client_headers(self.api, self.alice, partner)
        response = self.api.get(f"/client/trades/{trade_id}", headers=headers)
        assert response.status_code == 200, response.content
        return str(response.json()["data"]["status"])

    def offer_of(self, trade_id: str) -> str:
        return str(Trade.objects.get(pk=trade_id).offer_id)


def webhooks(hooks: Receiver, trade_id: str) -> list[str]:
    return [r.json["type"] for r in hooks.received if r.json.get("trade", {}).get("id") == trade_id]


def bot_added_by_staff(steam: RecordedSteam) -> SteamBot:
    """A new bot: its password and guard secrets, no refresh token yet."""
    recorded = steam.bot(BOT_ID, "atlas")
    steam.revoke_refresh_tokens(BOT_ID)
    return SteamBot.objects.create(
        name="Bot Atlas",
        account_name=recorded.account_name,
        steam_id=recorded.steam_id,
        games=[730],
        shared_secret_sealed=seal(recorded.shared_secret),
        identity_secret_sealed=seal(recorded.identity_secret),
        password_sealed=seal(recorded.password),
    )


def test_a_week_of_deposits_under_trade_protection_with_daily_session_renewals(
    api, alice, hooks, steam, ak, worker, clock_advance
):
    run = Run(api, alice, steam, worker, clock_advance)
    bot = bot_added_by_staff(steam)
    # "Log in again" in the admin
    assert steam_bot_log_in(bot=bot, staff=BOOT) == SteamBot.State.ONLINE
    (login,) = steam.calls_to("BeginAuthSessionViaCredentials")
    assert login[2]["device_details[platform_type]"] == "3"  # as the mobile app

    # The users: one with two tradable items, one received three days ago (protected for four
    # more) and one shown to him only; one with an item; one whose link has a stale token; one
    # whose profile is private.
    received = Asset("11000000090", AK, wear="0.2512", protected_until=steam.now() + 4 * DAY)
    hidden = Asset("11000000091", AK, wear="0.2512", owner_only=True)
    steam.user(
        platform_id(HOLDER),
        inventory={(730, "2"): [*ak_assets(2), hidden], (730, "16"): [received]},
    )
    steam.user(platform_id(REVERSER), inventory={(730, "2"): ak_assets(1, start=5)})
    steam.user(platform_id(STRANGER), token="Zz9_y-A1")
    steam.user(platform_id(HIDDEN), private=True)
    assert [run.check(p) for p in (HOLDER, REVERSER, STRANGER, HIDDEN)] == [1, 1, 6, 5]

    # Day 0: both deposit; the offers go live (sent and confirmed by the worker) and are
    # accepted: the items sit in the bot's protected context.
    held = run.deposit(HOLDER, ["11000000001", "11000000002"])
    reversed_ = run.deposit(REVERSER, ["11000000005"])
    steam.accept(run.offer_of(held))
    steam.accept(run.offer_of(reversed_))
    run.poll(until=lambda: {run.status(held), run.status(reversed_)} == {"hold"})
    assert money(alice)["escrow"] == 3 * PRICE
    assert SteamBot.objects.get(pk=bot.pk).inventory_count == 3

    # Days 1 to 7, a poll a day: each day the access token has expired and is renewed from the
    # refresh token. Day 2: the second user's trade is reversed under protection. Day 4: the
    # worker dies and another is started.
    for day in range(1, 8):
        run.days_pass(1)
        if day == 2:
            steam.reverse(run.offer_of(reversed_))
        if day == 4:
            worker.kill()
            worker.start()
        run.poll(until=(lambda: run.status(reversed_) == "reverted") if day == 2 else None)
        assert SteamBot.objects.get(pk=bot.pk).state == SteamBot.State.ONLINE
    assert run.status(held) == "hold"
    assert len(steam.calls_to("BeginAuthSessionViaCredentials")) == 1  # never again
    assert len(steam.calls_to("GenerateAccessTokenForApp")) >= 7

    # The week of protection is over: the bot's items are tradable, read with its session.
    assert PROTECTION <= 7 * DAY
    own = SteamPlatform().inventory(BOT_ID, 730, tenant="")
    assert [(a.market_hash_name, a.tradable) for a in own] == [(AK, True), (AK, True)]

    # Day 8: the hold ends; beat's hold sweep completes the deposit.
    before = money(alice)
    run.days_pass(1.01)
    sweep_holds.delay()
    wait_until(lambda: run.status(held) == "completed", "the deposit completed", alive=[worker])
    after = money(alice)
    assert after["escrow"] == before["escrow"] - 2 * PRICE == Decimal("0.00")
    assert after["available"] == before["available"] + 2 * PRICE
    wait_until(
        lambda: not WebhookEvent.objects.exclude(status="delivered").exists(),
        "every webhook delivered",
        alive=[worker],
    )
    assert webhooks(hooks, held)[-3:] == ["trade.active", "trade.hold", "trade.completed"]
    assert webhooks(hooks, reversed_)[-2:] == ["trade.hold", "trade.reverted"]
    assert "is private" not in worker.log.read_text()
    assert wallet_clean()
