"""Metrics in multiprocess mode with the real processes of one machine sharing one
PROMETHEUS_MULTIPROC_DIR: gunicorn (two worker processes), a Celery worker and a feed process.
One scrape of the web server shows them all, each labelled with its role; a dead tree keeps its
counters and loses its live gauges; a role's start removes the folders its dead predecessors
left."""

import os
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from django.conf import settings

from merchants.models import Merchant
from tests.factories import make_actor, trade_url
from tests.faults.callback import CallbackServer
from tests.faults.database import database_url
from tests.faults.processes import (
    Process,
    celery_worker,
    free_port,
    service_env,
    wait_until,
    web_server,
)
from tests.feed.harness import FeedClient, FeedProcess
from tests.ops.metrics import Samples, parsed, value
from tests.withdrawals.conftest import catalog_item, make_listing
from trading.models import CatalogItem, Trade
from wallet.services import wallet_admin_credit

__all__ = ["catalog_item"]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TOKEN = "metrics-token-of-the-machine"


def dead_pid() -> int:
    """A pid no process has now."""
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid -= 1


@pytest.fixture
def callback() -> Iterator[CallbackServer]:
    server = CallbackServer()
    server.start()
    yield server
    server.stop()


def scrape(base: str) -> Samples:
    response = requests.get(
        f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert response.status_code == 200, response.text
    return parsed(response.text)[1]


def test_one_scrape_shows_every_process_of_the_machine(
    tmp_path: Path, callback: CallbackServer, catalog_item: CatalogItem
):
    root = tmp_path / "metrics"
    stale_web, stale_worker = root / f"web-{dead_pid()}", root / f"worker-{dead_pid()}"
    for stale in (stale_web, stale_worker):
        stale.mkdir(parents=True)
        (stale / "counter_1.db").write_bytes(b"")
    channel = f"trading-feed-test:{uuid.uuid4().hex[:12]}"
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    env |= {
        "PROMETHEUS_MULTIPROC_DIR": str(root),
        "METRICS_TOKEN": TOKEN,
        "FEED_BUS": "redis",
        "FEED_CHANNEL": channel,
        "FEED_REDIS_URL": settings.REDIS_URL,
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = web_server(env, port, tmp_path / "web.log").start()
    worker = celery_worker(env, tmp_path / "worker.log", "threads").start()
    feed = FeedProcess(
        tmp_path / "feed.log",
        channel=channel,
        PROMETHEUS_MULTIPROC_DIR=str(root),
    )
    actor = make_actor(name="Shop")
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url=callback.url)
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal("100.00"), reason="test")
    listing = make_listing(catalog_item, "10.00")
    client = FeedClient(feed.url)
    try:
        wait_until(lambda: _up(base), "the web server", alive=[web, worker])
        feed.start()
        client.connect(auth={"apiKey": actor.api_key})
        # Stale folders of the web role went when gunicorn started; the worker role's when the
        # worker did: both were started before this point.
        assert not stale_web.exists()
        assert not stale_worker.exists()
        before = scrape(base)
        for _ in range(20):  # fresh connections: both gunicorn workers answer some
            assert requests.get(f"{base}/health", timeout=10).status_code == 200
        bought = requests.post(
            f"{base}/secure/buy",
            json={"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.50}]},
            headers=actor.headers,
            timeout=30,
        )
        assert bought.status_code == 200, bought.text
        wait_until(
            lambda: Trade.objects.filter(status="pending").exists(),
            "the approval",
            alive=[web, worker, feed.process],
        )
        assert client.next("trade")["trade"]["status"] in ("initiated", "pending")
        delivered = {"task": "webhooks.deliver", "outcome": "success", "role": "worker"}

        def recorded() -> bool:
            now = scrape(base)
            return (
                value(now, "trading_feed_commit_to_send_seconds_count") >= 2
                and value(now, "trading_celery_tasks_total", delivered) >= 1
            )

        wait_until(recorded, "the feed and the worker in the scrape", alive=[web, worker])

        after = scrape(base)
        health = {"route": "health", "method": "GET", "status": "200", "role": "web"}
        assert (
            value(after, "trading_http_requests_total", health)
            - value(before, "trading_http_requests_total", health)
            == 20
        )
        web_files = {path.name for path in root.glob("web-*/counter_*.db")}
        assert len(web_files) == 2, web_files  # both gunicorn workers' counters, merged
        assert value(after, "trading_celery_task_last_run_timestamp_seconds") > 0
        # The pools of the processes that served (20 connections at most each).
        assert value(after, "trading_db_pool_connections", {"state": "max", "role": "web"}) >= 20
        assert value(after, "trading_db_pool_connections", {"state": "size", "role": "web"}) >= 1
        assert value(after, "trading_feed_sockets", {"role": "feed"}) == 1
        moves = {"type": "withdraw", "status": "initiated"}
        assert value(after, "trading_trade_moves_total", moves | {"role": "web"}) == 1
        assert (
            value(after, "trading_trade_moves_total", {"status": "pending", "role": "worker"}) == 1
        )
        assert (
            value(after, "trading_trades_in_flight", {"type": "withdraw", "status": "pending"}) == 1
        )

        # The same machine's metrics on a port of their own, without a token.
        port_of_its_own = free_port()
        server = Process(
            "metrics server",
            [sys.executable, "manage.py", "metrics_server", "--port", str(port_of_its_own)],
            env,
            tmp_path / "metrics-server.log",
        ).start()
        try:
            plain = f"http://127.0.0.1:{port_of_its_own}"
            wait_until(lambda: _answers(f"{plain}/metrics"), "the metrics server", alive=[server])
            text = requests.get(f"{plain}/metrics", timeout=10).text
            served = parsed(text)[1]
            assert value(served, "trading_http_requests_total", health) == value(
                scrape(base), "trading_http_requests_total", health
            )
            assert value(served, "trading_trades_in_flight", {"status": "pending"}) == 1
            assert requests.get(f"{plain}/other", timeout=10).status_code == 404
        finally:
            server.stop()

        feed.stop()  # killed: its sockets stop counting, what it measured stays
        client.wait_disconnected()
        gone = scrape(base)
        assert value(gone, "trading_feed_sockets") == 0
        assert value(gone, "trading_feed_commit_to_send_seconds_count") == value(
            after, "trading_feed_commit_to_send_seconds_count"
        )
    finally:
        client.close()
        feed.stop()
        worker.stop()
        web.stop()


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=5).status_code == 200
    except requests.RequestException:
        return False


def _up(base: str) -> bool:
    try:
        return requests.get(f"{base}/health", timeout=5).status_code == 200
    except requests.RequestException:
        return False
