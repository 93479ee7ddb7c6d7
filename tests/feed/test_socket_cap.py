"""A merchant holds at most FEED_MAX_SOCKETS_PER_MERCHANT open sockets across every feed
process (counted in Redis); the one over the cap gets an ``error`` event, then is disconnected."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.factories import Actor
from tests.faults.processes import wait_until
from tests.feed.harness import FeedClient, FeedProcess

pytestmark = pytest.mark.django_db(transaction=True)

Connect = Callable[..., FeedClient]
CAP = 2


@pytest.fixture
def two_feeds(tmp_path: Path, feed_channel: str) -> Iterator[tuple[FeedProcess, FeedProcess]]:
    channel = f"{feed_channel}:cap"
    feeds = tuple(
        FeedProcess(
            tmp_path / f"feed-{n}.log", channel=channel, FEED_MAX_SOCKETS_PER_MERCHANT=str(CAP)
        )
        for n in (1, 2)
    )
    for feed in feeds:
        feed.start()
    yield feeds  # type: ignore[misc]
    for feed in feeds:
        feed.stop()


def admitted(client: FeedClient) -> None:
    assert client.emit("subscribe", {"market": {"game": "730"}})["reason"] == "subscribe"


def test_a_merchant_holds_at_most_the_cap_across_feed_processes(
    two_feeds: tuple[FeedProcess, FeedProcess], open_socket: Connect, alice: Actor, bob: Actor
) -> None:
    first, second = two_feeds
    on_first = open_socket(alice.api_key, to=first)
    on_second = open_socket(alice.api_key, to=second)
    admitted(on_first)
    admitted(on_second)

    over = open_socket(alice.api_key, to=first)

    assert over.next("error") == {
        "code": "FEED_SOCKET_LIMIT",
        "message": f"This merchant already has {CAP} sockets open.",
        "limit": CAP,
    }
    over.wait_disconnected()
    admitted(open_socket(bob.api_key, to=second))  # the cap is per merchant

    on_second.close()
    wait_until(lambda: second.health()["sockets"] == 1, "the closed socket to be let go")
    admitted(open_socket(alice.api_key, to=first))
