"""A Celery worker SIGKILLed while a bot's offer is being sent, then started again: exactly one
offer exists at Steam, and it is the one the withdrawal goes live with.

Real processes on the committed test database (tests/faults/conftest.py): a worker started as
``celery -A config worker`` with the Steam adapter and the supplier marketplace configured
through its environment, the recorded Steam on loopback. "While being sent" is made certain:
the recorded Steam takes the send (the offer exists there) and holds its answer until the test
has killed the worker, so the service never learns the offer's id."""

import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from core.sealed import seal
from tests.factories import Actor, platform_id
from tests.faults.callback import CallbackServer
from tests.faults.conftest import TRADE_URL, events_delivered, every_event_received, lease_past
from tests.faults.database import database_url
from tests.faults.processes import Process, celery_worker, service_env, wait_until
from tests.steam.conftest import BOOT
from tests.steam.recorded import Asset, RecordedSteam, recorded_steam
from tests.withdrawals.conftest import money, wallet_clean
from trading.marketplace import get_marketplace
from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE
from trading.models import BotDelivery, CatalogItem, Status, SteamBot, SteamOffer, Trade, TradeEvent
from trading.platform import get_platform
from trading.services.bots import steam_bot_log_in
from trading.services.stock import stock_listing_add
from trading.tasks import sweep_deliveries
from trading.withdrawals.services.deliveries import CLAIM

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BOT_ID = "76561199100000001"
ASSET = "11000000700"
AK = "AK-47 | Redline (Field-Tested)"


@pytest.fixture
def steam() -> Iterator[RecordedSteam]:
    with recorded_steam() as server:
        yield server


@pytest.fixture
def adapters(settings, steam: RecordedSteam) -> Iterator[dict[str, str]]:
    """The Steam adapter and the supplier marketplace, here and (as its environment) in the
    worker: the same hosts, the same key sealing the bot's secrets."""
    environment = {
        "GAME_PLATFORM": "trading.platform.steam.SteamPlatform",
        "MARKETPLACE": SUPPLIER_MARKETPLACE,
        "MARKETPLACE_SUPPLIERS": "",
        "STEAM_WEB_API_URL": steam.url,
        "STEAM_COMMUNITY_URL": steam.url,
        "STEAM_LOGIN_URL": steam.url,
        "STEAM_BACKOFF_SECONDS": "0",
        "SECRETS_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    }
    settings.GAME_PLATFORM = environment["GAME_PLATFORM"]
    settings.MARKETPLACE = environment["MARKETPLACE"]
    settings.MARKETPLACE_SUPPLIERS = []
    settings.STEAM_WEB_API_URL = settings.STEAM_COMMUNITY_URL = steam.url
    settings.STEAM_LOGIN_URL = steam.url
    settings.STEAM_BACKOFF_SECONDS = 0
    settings.SECRETS_ENCRYPTION_KEYS = [environment["SECRETS_ENCRYPTION_KEYS"]]
    get_platform.cache_clear()
    get_marketplace.cache_clear()
    yield environment
    get_platform.cache_clear()
    get_marketplace.cache_clear()


@pytest.fixture
def steam_worker(
    module_worker: Process, transactional_db: None, adapters: dict[str, str], tmp_path: Path
) -> Iterator[Process]:
    """A solo worker with the adapters configured (the module's worker is stopped meanwhile,
    so this one takes every task)."""
    module_worker.stop()
    env = service_env(database_url=database_url(), redis_url=django_settings.REDIS_URL)
    process = celery_worker({**env, **adapters}, tmp_path / "worker.log").start()
    yield process
    process.stop()


@pytest.fixture
def stocked(steam: RecordedSteam, adapters: dict[str, str], shop: Actor) -> SteamBot:
    """An online bot holding an item that is listed as our own stock at 9.00 (9.45 for the
    shop, with its 5 % fee); the recipient can trade."""
    recorded = steam.bot(BOT_ID, "atlas")
    steam.user(BOT_ID, inventory={(730, "2"): [Asset(ASSET, AK, wear="0.2512")]})
    steam.user(platform_id(42))
    bot = SteamBot.objects.create(
        name="Bot Atlas",
        account_name=recorded.account_name,
        steam_id=recorded.steam_id,
        games=[730],
        shared_secret_sealed=seal(recorded.shared_secret),
        identity_secret_sealed=seal(recorded.identity_secret),
        refresh_token_sealed=seal(next(iter(recorded.refresh_tokens))),
        password_sealed=seal(recorded.password),
    )
    assert steam_bot_log_in(bot=bot, staff=BOOT) == SteamBot.State.ONLINE
    CatalogItem.objects.create(
        id="730-000100",
        game=730,
        market_hash_name=AK,
        name="AK-47 | Redline",
        item_type="Rifle",
        rarity="Classified",
        rarity_color="d32ce6",
        exterior="Field-Tested",
        icon_url="https://cdn.sandbox.invalid/a.png",
        reference_price=Decimal("40.00"),
    )
    stock_listing_add(bot_platform_id=BOT_ID, game=730, asset_id=ASSET, price=Decimal("9.00"))
    return bot


def test_a_worker_killed_mid_send_leaves_one_offer_and_the_restart_sends_none(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    steam: RecordedSteam,
    stocked: SteamBot,
    steam_worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    steam.send_release = threading.Event()  # Steam takes the send and holds its answer
    body = {"tradeUrl": TRADE_URL, "items": [{"itemId": f"stock-{ASSET}", "price": 9.45}]}
    response = api.post("/secure/buy", body, format="json", headers=shop.headers)
    assert response.status_code == 200, response.content
    trade_id = response.json()["data"]["id"]

    # The worker approved, bought from our stock and is sending the bot's offer: Steam has made
    # it, the worker has not heard its id. Killed now.
    wait_until(steam.send_started.is_set, "the offer's send at Steam", alive=[steam_worker])
    steam_worker.kill()
    steam.send_release.set()
    steam.send_release = None

    (made,) = steam.sent_by(BOT_ID)
    assert made.state == 9  # made, awaiting the bot's confirmation
    row = SteamOffer.objects.get()
    assert (row.offer_id, row.send_attempts) == ("", 1)  # counted before sending, id lost
    delivery = BotDelivery.objects.get(trade_id=trade_id)
    assert (delivery.state, delivery.offer_key) == ("waiting", row.key)
    assert Trade.objects.get(pk=trade_id).status == Status.PENDING
    locked = money(shop)["locked"]
    assert locked == Decimal("9.45")

    # A new worker; the dead one's claim on the delivery (service clock) and its lease on the
    # send (real time) run out.
    steam_worker.start()
    clock_advance(int(CLAIM.total_seconds()) + 1)
    lease_past(SteamOffer.objects.filter(pk=row.pk), "send_lease_until")
    sweep_deliveries.delay()
    wait_until(
        lambda: Trade.objects.filter(pk=trade_id, status=Status.ACTIVE).exists(),
        "the withdrawal live",
        alive=[steam_worker],
    )
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[steam_worker])

    # One offer at Steam, ever: found by its reference and confirmed, not sent again.
    assert [offer.id for offer in steam.sent_by(BOT_ID)] == [made.id]
    assert len(steam.calls_to("/tradeoffer/new/send")) == 1
    assert steam.offers[made.id].state == 2
    row.refresh_from_db()
    assert (row.offer_id, row.send_attempts) == (made.id, 1)
    trade = Trade.objects.get(pk=trade_id)
    assert trade.offer_id == made.id
    assert TradeEvent.objects.filter(trade_id=trade_id, kind="purchased").count() == 1
    assert BotDelivery.objects.get(trade_id=trade_id).state == "offered"
    assert money(shop)["locked"] == locked
    every_event_received(shop, callback)
    assert wallet_clean()
