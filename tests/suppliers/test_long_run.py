"""A long run, as an operator sees it: the service deployed as processes (gunicorn for the HTTP
API, a Celery worker taking the tasks beat would send), every outside system a recorded server
(Waxpeer, DMarket, Steam) reached through the settings the README names, and three withdrawals
filled end to end: one by Waxpeer (its seller trades to the recipient), one from DMarket's own
inventory (bought, withdrawn to our bot, handed over by our bot), one by a DMarket p2p seller
(traded to our bot, handed over). Each item reaches the recipient under the trade offer id the
platform gave it, sits in the 7-day trade protection hold and completes; the worker is killed
and started again between steps, and the service's clock and the recorded servers' move
together. Nothing here runs a task in the test's process: the test only sends the sweeps.

The DMarket legs read our bot's Steam inventory (the delivery finds the item there); they rely
on the recorded Steam of tests/steam answering a bot's own protected items to that bot."""

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from cryptography.fernet import Fernet
from django.conf import settings as django_settings

from config.celery import app as celery_app
from tests.factories import Actor, make_actor, platform_id, trade_url
from tests.faults.callback import CallbackServer
from tests.faults.conftest import web_serving
from tests.faults.database import database_url
from tests.faults.processes import Process, celery_worker, service_env, wait_until
from tests.steam.conftest import BOOT, bot_row
from tests.steam.recorded import Asset, RecordedSteam, recorded_steam
from tests.suppliers.conftest import DMARKET_BOT, WAXPEER_KEY, Suppliers
from tests.suppliers.servers import Listing
from tests.withdrawals.conftest import funded, money, service_money, wallet_clean
from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE
from trading.models import SteamBot, SupplierListing, SupplierOrder, SupplierWithdraw, TradeItem
from trading.platform import get_platform
from trading.services.bots import steam_bot_log_in
from trading.tasks import (
    follow_supplier_orders,
    poll_offers,
    poll_suppliers,
    sweep_deliveries,
    sweep_holds,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RECIPIENT = 42
AK = "AK-47 | Redline (Field-Tested)"
WAX_ID = "27165625733"
DM_OWN = "c3d4e5f6-a7b8-4012-8def-345678901234"
DM_OWN_ASSET = "b1a2c3d4-0000-4000-8000-000000000001"
DM_P2P = "d4e5f6a7-b8c9-4123-8ef0-456789012345"
DM_P2P_ASSET = "b1a2c3d4-0000-4000-8000-000000000002"
WEAR_OWN, WEAR_P2P = "0.2512345678", "0.3012345678"
DMARKET_STEAM_BOT = "76561199200000009"  # DMarket's storage bot
P2P_SELLER = "76561199200000077"  # a DMarket p2p seller's Steam account
DAY = 86_400
WEEK = 7 * DAY


@pytest.fixture(autouse=True)
def _eager_celery() -> Iterator[None]:
    """Every task goes to the broker, for the worker (this module's own, not the suite's)."""
    celery_app.conf.task_always_eager = False
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def steam() -> Iterator[RecordedSteam]:
    with recorded_steam() as server:
        yield server


@pytest.fixture
def deployment(settings, suppliers: Suppliers, steam: RecordedSteam) -> dict[str, str]:
    """The environment of the service's processes, and this process's settings to match."""
    key = Fernet.generate_key().decode()
    steam_hosts = {
        "STEAM_WEB_API_URL": steam.url,
        "STEAM_COMMUNITY_URL": steam.url,
        "STEAM_LOGIN_URL": steam.url,
    }
    for name, value in steam_hosts.items():
        setattr(settings, name, value)
    settings.GAME_PLATFORM = "trading.platform.steam.SteamPlatform"
    settings.STEAM_BACKOFF_SECONDS = 0
    settings.SECRETS_ENCRYPTION_KEYS = [key]
    get_platform.cache_clear()
    env = service_env(database_url=database_url(), redis_url=django_settings.REDIS_URL)
    env.update(
        steam_hosts,
        GAME_PLATFORM=settings.GAME_PLATFORM,
        STEAM_BACKOFF_SECONDS="0",
        SECRETS_ENCRYPTION_KEYS=key,
        MARKETPLACE=SUPPLIER_MARKETPLACE,
        MARKETPLACE_SUPPLIERS="waxpeer,dmarket",
        WAXPEER_API_URL=suppliers.waxpeer.url,
        WAXPEER_API_KEY=WAXPEER_KEY,
        DMARKET_API_URL=suppliers.dmarket.url,
        DMARKET_PUBLIC_KEY=settings.DMARKET_PUBLIC_KEY,
        DMARKET_SECRET_KEY=settings.DMARKET_SECRET_KEY,
        DMARKET_BOT_STEAM_ID=DMARKET_BOT,
        SUPPLIER_READ_TIMEOUT_SECONDS="2",
    )
    yield env
    get_platform.cache_clear()


@pytest.fixture
def bot(deployment, steam: RecordedSteam) -> SteamBot:
    """Our bot, linked to the DMarket account, online (staff logged it in)."""
    row = bot_row(steam.bot(DMARKET_BOT, "atlas"))
    assert steam_bot_log_in(bot=row, staff=BOOT) == SteamBot.State.ONLINE
    return row


@pytest.fixture
def callback() -> Iterator[CallbackServer]:
    server = CallbackServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def shop(transactional_db: None, callback: CallbackServer) -> Actor:
    """A merchant with 1000.00 whose callback approves every withdrawal."""
    return funded(make_actor(name="Shop"), "1000.00", callback.url)


@pytest.fixture
def worker(deployment, tmp_path: Path) -> Iterator[Process]:
    process = celery_worker(deployment, tmp_path / "worker.log").start()
    yield process
    process.stop()


@pytest.fixture
def api(deployment, tmp_path: Path) -> Iterator[str]:
    with web_serving(deployment, tmp_path / "web.log") as base:
        yield base


class Operator:
    """What the test does in place of beat and of the outside world's people."""

    def __init__(self, base: str, shop: Actor, worker: Process, suppliers: Suppliers, advance):
        self.base, self.shop, self.worker = base, shop, worker
        self.suppliers, self._advance = suppliers, advance

    def call(self, method: str, path: str, body: object = None) -> dict:
        response = requests.request(
            method, self.base + path, json=body, headers=self.shop.headers, timeout=30
        )
        assert response.status_code == 200, response.text
        data: dict = response.json()["data"]
        return data

    def trade(self, trade_id: str) -> dict:
        return self.call("GET", f"/secure/trades/{trade_id}")

    def buy(self, listing_id: str, price: str) -> str:
        body = {
            "tradeUrl": trade_url(RECIPIENT),
            "items": [{"itemId": listing_id, "price": float(price)}],
        }
        return str(self.call("POST", "/secure/buy", body)["id"])

    def later(self, seconds: float) -> None:
        """The service's clock and the recorded suppliers' move together."""
        self._advance(int(seconds))
        self.suppliers.clock_moved(seconds)

    def restart_worker(self) -> None:
        """Killed as machines die (SIGKILL), then started again."""
        self.worker.kill()
        self.worker.start()

    def until(self, condition, what: str) -> None:
        wait_until(condition, what, alive=[self.worker])

    def status(self, trade_id: str) -> str:
        return str(TradeItem.objects.get(trade_id=trade_id).status)


def test_three_supplier_withdrawals_end_to_end_through_restarts(
    shop, callback, api, worker, bot, steam, suppliers, catalog_item, clock_advance
):
    op = Operator(api, shop, worker, suppliers, clock_advance)
    steam.user(platform_id(RECIPIENT))
    wax, dmarket = suppliers.waxpeer.world, suppliers.dmarket.world
    wax.listings[WAX_ID] = Listing(ref=WAX_ID, name=AK, price=10_500)
    # Bought from DMarket's bots under Steam's 7-day trade protection: withdrawable after it.
    dmarket.listings[DM_OWN] = Listing(
        ref=DM_OWN, name=AK, price=1_100, asset=DM_OWN_ASSET, wear=float(WEAR_OWN), locked_for=WEEK
    )
    dmarket.listings[DM_P2P] = Listing(
        ref=DM_P2P, name=AK, price=1_200, asset=DM_P2P_ASSET, wear=float(WEAR_P2P), held=False
    )
    before = money(shop)

    # Beat polls the suppliers; the market shows what they list.
    poll_suppliers.delay()
    op.until(lambda: SupplierListing.objects.count() == 3, "the polled listings")
    market = op.call("GET", "/secure/market?search=Redline")["items"]
    assert {row["id"] for row in market} == {
        f"waxpeer-{WAX_ID}",
        f"dmarket-{DM_OWN}",
        f"dmarket-{DM_P2P}",
    }

    # Three withdrawals, approved by the merchant's callback and bought by the worker.
    wax_trade = op.buy(f"waxpeer-{WAX_ID}", "11.03")
    own_trade = op.buy(f"dmarket-{DM_OWN}", "11.55")
    p2p_trade = op.buy(f"dmarket-{DM_P2P}", "12.60")
    trades = (wax_trade, own_trade, p2p_trade)
    op.until(
        lambda: all(
            TradeItem.objects.filter(trade_id=t, status="pending").exclude(purchase_ref="")
            for t in trades
        ),
        "three purchases",
    )
    assert [buy.get("type") for buy in dmarket.buys] == ["dmarket", "p2p"]
    assert len(wax.buys) == 1
    op.restart_worker()

    # Waxpeer's seller sends its offer; what DMarket holds for us is locked for now.
    wax_offer = wax.seller_sends(TradeItem.objects.get(trade_id=wax_trade).purchase_ref)
    op.later(120)
    follow_supplier_orders.delay()
    op.until(lambda: op.status(wax_trade) == "active", "the Waxpeer offer live")
    assert op.trade(wax_trade)["offerID"] == wax_offer
    assert dmarket.withdraws == []
    op.restart_worker()

    # A week on (DMarket's clock with ours), DMarket may let it go: it is withdrawn, once.
    op.later(WEEK)
    follow_supplier_orders.delay()
    op.until(lambda: SupplierWithdraw.objects.filter(state="sent").exists(), "the withdrawal")
    (withdraw,) = dmarket.withdraws
    assert withdraw["assets"][0]["id"] == DM_OWN_ASSET
    assert withdraw["requestId"] == SupplierWithdraw.objects.get().request_id
    op.restart_worker()

    # DMarket's bot and the p2p seller trade the items to our bot, which accepts them.
    dmarket.dmarket_bot_sends(DM_OWN_ASSET)
    dmarket.dmarket_bot_sends(DM_P2P_ASSET)
    steam.gift(DMARKET_STEAM_BOT, DMARKET_BOT, [Asset("12000000001", AK, wear=WEAR_OWN)])
    steam.gift(P2P_SELLER, DMARKET_BOT, [Asset("12000000002", AK, wear=WEAR_P2P)])
    poll_offers.delay()
    op.until(lambda: len(steam.accepted_by_partner) == 2, "our bot accepting both")
    dmarket.arrives_in_steam(DM_OWN_ASSET)
    dmarket.arrives_in_steam(DM_P2P_ASSET)
    wax.recipient_accepts(TradeItem.objects.get(trade_id=wax_trade).purchase_ref)
    op.later(120)
    follow_supplier_orders.delay()
    op.until(lambda: SupplierOrder.objects.filter(state="at_bot").count() == 2, "both at our bot")
    op.until(lambda: op.status(wax_trade) == "hold", "the Waxpeer item held")
    op.restart_worker()

    # CS2's 7-day trade protection: our bot may offer them only once it ends.
    op.later(7 * DAY + 3600)
    steam.protection_ends(DMARKET_BOT)
    sweep_deliveries.delay()
    op.until(lambda: len(steam.sent_by(DMARKET_BOT)) == 2, "our bot's two offers")
    op.until(lambda: op.status(own_trade) == op.status(p2p_trade) == "active", "the handovers live")
    offers = {offer.id for offer in steam.sent_by(DMARKET_BOT)}
    assert {op.trade(own_trade)["offerID"], op.trade(p2p_trade)["offerID"]} == offers
    # Beat's poll sees the bot's live offers (and from them on, reads Steam's offer times).
    poll_offers.delay()
    op.until(lambda: SteamBot.objects.get().poll_since > 0, "a poll seeing the live offers")
    op.restart_worker()

    # The recipient accepts; each item is held 7 days, then completes.
    for offer_id in offers:
        steam.accept(offer_id)
    poll_offers.delay()
    op.until(lambda: op.status(own_trade) == op.status(p2p_trade) == "hold", "both held")
    op.later(8 * DAY)
    sweep_holds.delay()
    op.until(lambda: all(op.status(t) == "completed" for t in trades), "all three completed")

    for trade_id in trades:
        shown = op.trade(trade_id)
        assert shown["status"] == "completed"
        assert shown["items"][0]["offerID"] == shown["offerID"]
    assert money(shop)["available"] == before["available"] - Decimal("35.18")
    assert service_money("supplier") == Decimal("33.50")  # 10.50 + 11.00 + 12.00
    assert (len(wax.buys), len(dmarket.buys), len(dmarket.withdraws)) == (1, 2, 1)
    assert len(steam.sent_by(DMARKET_BOT)) == 2
    assert wallet_clean()
