"""Read replicas (DATABASE_REPLICA_URLS) with a real streaming replica: the test starts a
PostgreSQL primary of its own and a replica of it (pg_basebackup, streaming), migrates and seeds
the primary, and serves the API with gunicorn on both. The replica's replay is then paused, so
whatever a read shows tells where it was read: trade history pages, ledger lists and market
reads come from the replica (they miss what changed meanwhile); a trade by id, the API key and
every write from the primary. Resumed, the replica catches up and the lists show it all."""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from django.conf import settings

from core.market_version import market_version_bump
from tests.faults.callback import CallbackServer
from tests.faults.processes import free_port, service_env, wait_until, web_server
from tests.ops.postgres import Cluster

pytestmark = pytest.mark.slow
DBNAME = "trading_replicas"
TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner=42&token=Ab3_x-Z9"


class World:
    def __init__(self, primary: Cluster, replica: Cluster, base: str, env: dict[str, str]):
        self.primary, self.replica, self.base, self.env = primary, replica, base, env
        self.callback_url = ""

    def manage(self, *argv: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *argv],
            env=self.env,
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def merchant(self, name: str) -> dict[str, str]:
        # No worker runs here: the callback is only tested, a buy stays initiated.
        made = json.loads(
            self.manage(
                "create_merchant",
                *("--name", name, "--balance", "100", "--callback-url", self.callback_url),
            )
        )
        return {"api-key": made["apiKey"]}

    def get(self, path: str, headers: dict[str, str]) -> dict:
        response = requests.get(f"{self.base}{path}", headers=headers, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()["data"]

    def replay(self, *, paused: bool) -> None:
        self.replica.execute(f"SELECT pg_wal_replay_{'pause' if paused else 'resume'}()")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    callback = CallbackServer()
    callback.start()
    primary = Cluster.primary()
    replica = None
    web = None
    try:
        primary.execute(f"CREATE DATABASE {DBNAME}")
        env = service_env(database_url=primary.url(DBNAME), redis_url=settings.REDIS_URL)
        setup = World(primary, primary, "", env)
        setup.manage("migrate", "--no-input")
        setup.manage("seed_sandbox", "--items", "40", "--listings", "200")
        replica = primary.replica()
        env = env | {"DATABASE_REPLICA_URLS": replica.url(DBNAME)}
        port = free_port()
        log: Path = tmp_path_factory.mktemp("web") / "web.log"
        web = web_server(env, port, log).start()
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _healthy(base), "the web server", alive=[web])
        serving = World(primary, replica, base, env)
        serving.callback_url = callback.url
        yield serving
    finally:
        callback.stop()
        if web is not None:
            web.stop()
        if replica is not None:
            replica.stop()
        primary.stop()


def _healthy(base: str) -> bool:
    try:
        return requests.get(f"{base}/health", timeout=5).status_code == 200
    except requests.RequestException:
        return False


def offers(world: World, key: dict[str, str]) -> list[dict]:
    """The standard-delivery listings of the first item of the market that has two or more."""
    page = world.get("/secure/market?perPage=50&sort=priceAsc", key)
    for item in page["items"]:
        name = quote(item["marketHashName"])
        found = world.get(f"/secure/market/item?marketHashName={name}&delivery=standard", key)
        if len(found) >= 2:
            return found
    raise AssertionError("no item with two listings")


def test_history_and_ledger_lists_read_the_replica_and_the_rest_the_primary(world: World):
    shop = world.merchant("Replicated shop")
    bought_listing, other = offers(world, shop)[:2]
    listing_id, price = bought_listing["id"], bought_listing["offer"]["price"]
    wait_until(lambda: world.get("/secure/trades", shop)["items"] == [], "the replica")
    world.replay(paused=True)
    try:
        bought = requests.post(
            f"{world.base}/secure/buy",
            json={"tradeUrl": TRADE_URL, "items": [{"itemId": listing_id, "price": price}]},
            headers=shop,
            timeout=30,
        )
        assert bought.status_code == 200, bought.text  # written on the primary
        trade_id = bought.json()["data"]["id"]
        assert world.get(f"/secure/trades/{trade_id}", shop)["id"] == trade_id  # primary
        assert world.get("/secure/trades", shop)["items"] == []  # the replica, paused

        # A listing gone on the primary (and the market's pages made stale) is still on the
        # paused replica, where market reads look.
        world.primary.execute(
            f"DELETE FROM sandbox_sandboxlisting WHERE id = '{other['id']}'", DBNAME
        )
        market_version_bump()
        name = quote(other["marketHashName"])
        shown = world.get(f"/secure/market/item?marketHashName={name}&delivery=standard", shop)
        assert other["id"] in [row["id"] for row in shown]

        late = world.merchant("Merchant made while the replica waits")
        ledger = world.get("/v1/ledger/transactions", late)
        # Its key was read from the primary; its 100.00 credit is not on the replica yet.
        assert ledger["items"] == []
    finally:
        world.replay(paused=False)

    wait_until(
        lambda: [t["id"] for t in world.get("/secure/trades", shop)["items"]] == [trade_id],
        "the replica to catch up",
    )
    assert len(world.get("/v1/ledger/transactions", late)["items"]) == 1
    market_version_bump()
    shown = world.get(f"/secure/market/item?marketHashName={name}&delivery=standard", shop)
    assert other["id"] not in [row["id"] for row in shown]
