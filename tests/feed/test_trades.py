"""``trade {trade}``: after every committed change of a merchant's trade, to that merchant's
sockets only, in order per trade, the object ``GET /secure/trades/{id}`` answers."""

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from core.feed import feed_publish
from sandbox.models import SandboxListing
from tests.factories import Actor
from tests.feed.conftest import buy, trade_now, world_event
from tests.feed.harness import FeedClient
from tests.withdrawals.conftest import make_listing
from trading.models import CatalogItem

pytestmark = pytest.mark.django_db(transaction=True)

Connect = Callable[..., FeedClient]


def test_each_change_of_a_trade_reaches_its_merchant_in_order_as_the_api_shows_it(
    open_socket: Connect, api: APIClient, alice: Actor, listing: SandboxListing
) -> None:
    client = open_socket(alice.api_key)

    trade = buy(api, alice, [listing])  # approved by the callback at once: initiated, pending
    snapshots = {"pending": trade_now(api, alice, trade["id"])}
    for event in ("purchased", "accepted", "hold_ended"):
        moved = world_event(api, alice, trade["id"], event)
        snapshots[moved["status"]] = trade_now(api, alice, trade["id"])

    received = [client.next("trade")["trade"] for _ in range(5)]
    assert [t["status"] for t in received] == [
        "initiated",
        "pending",
        "active",
        "hold",
        "completed",
    ]
    assert {t["id"] for t in received} == {trade["id"]}
    for pushed in received[1:]:
        assert pushed == snapshots[pushed["status"]]
    assert client.pending() == []


def test_a_merchant_never_sees_another_merchants_trade(
    open_socket: Connect,
    api: APIClient,
    alice: Actor,
    bob: Actor,
    catalog_item: CatalogItem,
) -> None:
    alices, bobs = open_socket(alice.api_key), open_socket(bob.api_key, how="auth")

    alices_trade = buy(api, alice, [make_listing(catalog_item, "10.00")])
    assert [alices.next("trade")["trade"]["status"] for _ in range(2)] == ["initiated", "pending"]
    bobs_trade = buy(api, bob, [make_listing(catalog_item, "11.00")])

    # The feed handles the bus in order: had Bob been sent Alice's trade, it would have come
    # before his own.
    assert [bobs.next("trade")["trade"]["status"] for _ in range(2)] == ["initiated", "pending"]
    assert {t["trade"]["id"] for _, t in alices.seen} == {alices_trade["id"]}
    assert {t["trade"]["id"] for _, t in bobs.seen} == {bobs_trade["id"]}
    assert alices.pending() == []


def test_a_change_published_late_is_not_sent_after_a_newer_one(
    open_socket: Connect, alice: Actor
) -> None:
    """Two processes commit changes of one trade one after the other and publish the other way
    round: the older change is dropped, so a client never sees a trade go back."""
    client = open_socket(alice.api_key)
    merchant = str(alice.merchant.pk)

    def published(sequence: int) -> None:
        header = (
            f'{{"kind":"merchant","merchantId":"{merchant}","event":"trade",'
            f'"order":"trade:late-test","sequence":{sequence}}}'
        )
        assert feed_publish(header.encode() + b"\n" + f'{{"trade":{{"n":{sequence}}}}}'.encode())

    for sequence in (3, 2, 4):
        published(sequence)

    assert client.next("trade") == {"trade": {"n": 3}}
    assert client.next("trade") == {"trade": {"n": 4}}
    assert client.pending() == []
