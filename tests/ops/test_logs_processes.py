"""LOG_FORMAT=json in the real processes, started as the README's production section starts them:
gunicorn logs an access line for every request (a 401 and a 429 too) and its own lines as JSON;
a withdrawal's request id travels from its request into the worker's tasks and the logs of its
approval callback and webhooks; the worker's, beat's and the feed's every line, their start and
shutdown included, is one JSON object."""

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings

from merchants.webhooks.models import WebhookEvent
from tests.factories import make_actor, platform_id
from tests.faults.database import database_url
from tests.faults.processes import (
    DEADLINE_SECONDS,
    Process,
    free_port,
    service_env,
    wait_until,
    web_server,
)
from tests.webhooks.conftest import BUY_PRICE, TRADE_URL, shop_actor
from tests.withdrawals.conftest import catalog_item, make_listing
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem

__all__ = ["catalog_item"]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# An unverified merchant's budget for the crypto reads (merchants.ratelimits.CRYPTO_READ).
CRYPTO_READS_A_MINUTE = 10
# The README's worker, on the test's broker queue, without the chatter between workers.
WORKER = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "threads"]
WORKER += ["--concurrency", "4", "--loglevel", "INFO", "-Q", "celery"]
WORKER += ["--without-mingle", "--without-gossip", "--without-heartbeat"]


def json_env() -> dict[str, str]:
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    env.update(LOG_FORMAT="json", LOG_LEVEL="INFO")
    return env


def log_lines(process: Process) -> list[dict]:
    """Every line the process wrote (standard output and error together), each parsed as JSON:
    a line that is not fails the test. The test's own marker of each start is left out."""
    lines = []
    for line in process.log.read_text().splitlines():
        if line.startswith("--- start "):
            continue
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"{process.name} wrote a line that is not JSON: {line!r}")
    return lines


def stopped(process: Process) -> None:
    """SIGTERM, as a process manager stops it, and its exit awaited: its shutdown is logged."""
    assert process.alive(), process.log_tail()
    os.killpg(process.pid, signal.SIGTERM)
    assert process.popen is not None
    process.popen.wait(timeout=DEADLINE_SECONDS)


def serving(process: Process, base: str) -> None:
    def healthy() -> bool:
        try:
            return requests.get(f"{base}/health", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    wait_until(healthy, f"{process.name} serving", alive=[process])


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


def test_the_web_server_logs_every_request_and_its_own_lines_as_json(tmp_path: Path):
    actor = make_actor(name="Counted", is_verified=False)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = web_server(json_env(), port, tmp_path / "web.log")
    web.argv += ["--log-level", "info"]  # gunicorn's own lines, at their every level
    web.start()
    try:
        serving(web, base)
        refused = requests.get(
            f"{base}/v1/wallets/me/balance",
            headers={"api-key": "not-a-key", "X-Request-Id": "log-401"},
            timeout=10,
        )
        assert refused.status_code == 401
        deposits = f"{base}/secure/crypto/deposits?platformId={platform_id(7)}"
        for _ in range(CRYPTO_READS_A_MINUTE):
            assert requests.get(deposits, headers={"api-key": actor.api_key}, timeout=10).ok
        limited = requests.get(
            deposits, headers={"api-key": actor.api_key, "X-Request-Id": "log-429"}, timeout=10
        )
        assert limited.status_code == 429
    finally:
        stopped(web)

    lines = log_lines(web)
    access = {line["requestId"]: line for line in lines if line["logger"] == "access"}
    assert access["log-401"] | {"durationMs": 0, "time": 0} == {
        "time": 0,
        "level": "INFO",
        "logger": "access",
        "message": access["log-401"]["message"],
        "requestId": "log-401",
        "method": "GET",
        "path": "/v1/wallets/me/balance",
        "route": "v1/wallets/me/balance",
        "status": 401,
        "durationMs": 0,
        "client": "127.0.0.1",
    }  # no merchant: the key named none
    assert access["log-401"]["message"].startswith("GET /v1/wallets/me/balance 401 ")
    assert access["log-401"]["durationMs"] > 0
    assert access["log-429"]["status"] == 429
    assert access["log-429"]["route"] == "secure/crypto/deposits"
    assert access["log-429"]["path"] == "/secure/crypto/deposits"  # never the query
    assert access["log-429"]["merchantId"] == str(actor.merchant.pk)
    # /health (polled until up) and the ten reads that were answered are there too.
    assert len(access) >= 1 + 1 + CRYPTO_READS_A_MINUTE + 1
    own = [line["message"] for line in lines if line["logger"] == "gunicorn.error"]
    assert any(message.startswith("Booting worker") for message in own), own
    assert any(message.startswith("Handling signal: term") for message in own), own


def test_a_withdrawal_is_followed_by_its_request_id_into_the_worker_and_its_webhooks(
    tmp_path: Path, hooks: Receiver, catalog_item: CatalogItem
):
    shop = shop_actor("Followed", hooks.url)
    listing = make_listing(catalog_item, "10.00")
    env = json_env()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = web_server(env, port, tmp_path / "web.log").start()
    worker = Process("celery worker", WORKER, env, tmp_path / "worker.log").start()
    try:
        serving(web, base)
        bought = requests.post(
            f"{base}/secure/buy",
            json={"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": BUY_PRICE}]},
            headers={"api-key": shop.api_key, "X-Request-Id": "follow-1"},
            timeout=30,
        )
        assert bought.status_code == 200, bought.text
        trade_id = bought.json()["data"]["id"]
        # Approved by the receiver's 200, bought, then trade.pending sent: both recorded.
        wait_until(
            lambda: (
                {e.type: e.status for e in WebhookEvent.objects.filter(subject_id=trade_id)}
                == {"trade.initiated": "delivered", "trade.pending": "delivered"}
            ),
            "the approval and trade.pending delivered",
            alive=[web, worker],
        )
    finally:
        stopped(worker)
        stopped(web)

    events = WebhookEvent.objects.filter(subject_id=trade_id)
    assert {event.request_id for event in events} == {"follow-1"}
    (access,) = [
        line for line in log_lines(web) if line["logger"] == "access" and line["method"] == "POST"
    ]
    assert access["requestId"] == "follow-1"
    assert access["route"] == "secure/buy"
    assert access["merchantId"] == str(shop.merchant.pk)

    worker_lines = log_lines(worker)
    followed = [line for line in worker_lines if line["requestId"] == "follow-1"]
    attempts = {line["eventType"]: line for line in followed if line["logger"] == "webhooks"}
    assert set(attempts) == {"trade.initiated", "trade.pending"}
    for attempt in attempts.values():
        assert attempt["merchantId"] == str(shop.merchant.pk)
        assert attempt["outcome"] == "delivered"
        assert attempt["statusCode"] == 200
        assert attempt["level"] == "INFO"
    # The delivery task the request enqueued ran under the request's id, with its own task id.
    (delivered,) = [
        line
        for line in followed
        if line["logger"] == "celery.app.trace" and "webhooks.deliver" in line["message"]
    ]
    assert delivered["taskId"] in delivered["message"]
    assert delivered["taskId"] != "follow-1"
    # The worker's start (its banner) and its shutdown notice are records too.
    messages = [line["message"] for line in worker_lines]
    assert any("[queues]" in message for message in messages), messages
    assert any("Warm shutdown" in message for message in messages), messages


def test_beat_and_the_feed_write_only_json_lines(tmp_path: Path):
    env = json_env()
    beat = Process(
        "celery beat",
        [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel", "INFO"],
        env,
        tmp_path / "beat.log",
    ).start()
    port = free_port()
    feed = Process(
        "feed",
        [sys.executable, "manage.py", "feed", "--host", "127.0.0.1", "--port", str(port)],
        env,
        tmp_path / "feed.log",
    ).start()
    try:
        wait_until(lambda: "Sending due task" in beat.log.read_text(), "beat sending", alive=[beat])
        serving(feed, f"http://127.0.0.1:{port}")
    finally:
        stopped(beat)
        stopped(feed)

    beat_messages = [line["message"] for line in log_lines(beat)]
    assert "beat: Starting..." in beat_messages
    feed_lines = log_lines(feed)
    uvicorn = [line["message"] for line in feed_lines if line["logger"].startswith("uvicorn")]
    assert any(message.startswith("Uvicorn running on") for message in uvicorn), uvicorn
    assert "Finished server process" in " ".join(uvicorn)
