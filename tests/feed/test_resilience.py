"""The feed is best effort and never in the way: it survives a restart of its Redis, a service
whose feed (or bus) is down loses the live event and nothing else, and without Redis (the quick
start) the bus is a spool folder."""

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from core.feed import PUBLISH_STATS
from merchants.webhooks.models import WebhookEvent
from sandbox.models import SandboxListing
from tests.factories import Actor
from tests.faults.processes import free_port
from tests.faults.test_redis_restarted import OwnRedis, own_redis
from tests.feed.conftest import buy
from tests.feed.harness import FeedClient, FeedProcess
from tests.withdrawals.receiver import Receiver
from trading.models import Trade

pytestmark = pytest.mark.django_db(transaction=True)

Connect = Callable[..., FeedClient]
CS = {"market": {"game": "730"}}

__all__ = ["own_redis"]  # a fixture shared with the fault tests


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers (a Redis that hangs)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_the_feed_survives_a_restart_of_its_redis(
    tmp_path: Path,
    settings: object,
    feed_channel: str,
    own_redis: OwnRedis,
    open_socket: Connect,
    api: APIClient,
    alice: Actor,
    listing: SandboxListing,
) -> None:
    settings.FEED_REDIS_URL = own_redis.url  # type: ignore[attr-defined]
    feed = FeedProcess(tmp_path / "feed.log", channel=feed_channel, FEED_REDIS_URL=own_redis.url)
    feed.start()
    try:
        client = open_socket(alice.api_key, to=feed)
        assert client.emit("subscribe", CS)["reason"] == "subscribe"

        own_redis.restart()

        # Read again: what the bus carried meanwhile is lost, so market subscribers refetch.
        assert client.next("market")["reason"] == "subscribe"
        syncs = [client.next("market") for _ in range(2)]
        assert sorted(syncs, key=lambda sync: sync["source"]) == [
            {"type": "sync", "reason": "feed", "game": "730", "source": "instant"},
            {"type": "sync", "reason": "feed", "game": "730", "source": "standard"},
        ]
        trade = buy(api, alice, [listing])
        assert client.next("trade")["trade"]["id"] == trade["id"]
        assert not client.disconnected.is_set()
    finally:
        feed.stop()


def test_with_no_feed_listening_a_change_loses_only_its_live_event(
    settings: object, api: APIClient, alice: Actor, listing: SandboxListing, hooks: Receiver
) -> None:
    settings.FEED_CHANNEL += ":nobody-listens"  # type: ignore[attr-defined]
    published = PUBLISH_STATS["published"]

    trade = buy(api, alice, [listing])

    # To no one: the trade initiated and pending, the listing gone from the market.
    assert PUBLISH_STATS["published"] == published + 3
    assert Trade.objects.get(pk=trade["id"]).status == "pending"
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]


@pytest.mark.parametrize("bus", ["refusing", "silent"])
def test_with_the_bus_down_a_request_is_not_held_and_its_change_and_webhooks_are_kept(
    settings: object,
    silent_port: int,
    api: APIClient,
    alice: Actor,
    listing: SandboxListing,
    hooks: Receiver,
    bus: str,
) -> None:
    """One publish waits at most FEED_PUBLISH_TIMEOUT_SECONDS (0.25 s) for a bus that hangs;
    the next ones of the pause are skipped without waiting."""
    port = free_port() if bus == "refusing" else silent_port
    settings.FEED_REDIS_URL = f"redis://127.0.0.1:{port}/0"  # type: ignore[attr-defined]
    failed, skipped = PUBLISH_STATS["failed"], PUBLISH_STATS["skipped"]

    started = time.monotonic()
    trade = buy(api, alice, [listing])
    took = time.monotonic() - started

    # initiated (waits, fails), then pending and the bought listing's removal (skipped)
    assert (PUBLISH_STATS["failed"], PUBLISH_STATS["skipped"]) == (failed + 1, skipped + 2)
    assert took < 3, took
    assert Trade.objects.get(pk=trade["id"]).status == "pending"
    events = WebhookEvent.objects.filter(subject_id=trade["id"]).order_by("sequence")
    assert [(e.type, e.status) for e in events] == [
        ("trade.initiated", "delivered"),
        ("trade.pending", "delivered"),
    ]
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]


def test_without_redis_the_bus_is_a_spool_folder(
    tmp_path: Path,
    settings: object,
    feed_channel: str,
    open_socket: Connect,
    api: APIClient,
    alice: Actor,
    listing: SandboxListing,
) -> None:
    spool = tmp_path / "spool"
    settings.FEED_BUS = "spool"  # type: ignore[attr-defined]
    settings.FEED_SPOOL_DIR = spool  # type: ignore[attr-defined]
    feed = FeedProcess(
        tmp_path / "feed.log", channel=feed_channel, FEED_BUS="spool", FEED_SPOOL_DIR=str(spool)
    )
    feed.start()
    try:
        client = open_socket(alice.api_key, to=feed)
        trade = buy(api, alice, [listing])
        assert [client.next("trade")["trade"]["status"] for _ in range(2)] == [
            "initiated",
            "pending",
        ]
        assert {t["trade"]["id"] for _, t in client.seen} == {trade["id"]}
    finally:
        feed.stop()
