"""``market`` events after ``subscribe { market: { game } }``: the ``sync`` answer, then listings
as they appear (``upsert``), change price (``patch``) and go (``remove``), priced for each
merchant as ``GET /secure/market/item`` prices them."""

import io
from collections.abc import Callable
from decimal import Decimal
from random import Random
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from merchants.models import Merchant
from sandbox.models import SandboxListing
from sandbox.services.autopilot import sandbox_market_churn
from tests.factories import Actor
from tests.feed.conftest import buy
from tests.feed.harness import FeedClient
from tests.withdrawals.conftest import make_listing
from trading.models import CatalogItem

pytestmark = pytest.mark.django_db(transaction=True)

Connect = Callable[..., FeedClient]
CS = {"market": {"game": 730}}
SUBSCRIBED = {"type": "sync", "reason": "subscribe", "game": "730"}


def subscribed(client: FeedClient, game: dict[str, Any] = CS) -> FeedClient:
    answer = client.emit("subscribe", game)
    assert client.next("market") == answer
    return client


def listings_shown(api: APIClient, actor: Actor, item: CatalogItem) -> dict[str, dict]:
    response = api.get("/secure/market/item", {"itemId": item.id}, headers=actor.headers)
    assert response.status_code == 200, response.content
    return {row["id"]: row for row in response.json()["data"]}


def test_subscribers_see_listings_appear_change_price_and_go_priced_with_their_own_fee(
    open_socket: Connect, api: APIClient, alice: Actor, bob: Actor, catalog_item: CatalogItem
) -> None:
    Merchant.objects.filter(pk=bob.merchant.pk).update(withdraw_fee_rate=Decimal("0.1000"))
    cheapest = make_listing(catalog_item, "10.00")
    withdrawn = make_listing(catalog_item, "12.00")
    alices, bobs = subscribed(open_socket(alice.api_key)), subscribed(open_socket(bob.api_key))
    not_subscribed = open_socket(alice.api_key)

    assert sandbox_market_churn(rng=Random(7)) == 3  # reprice, withdraw, list a new one

    for client, actor in ((alices, alice), (bobs, bob)):
        events = {event["type"]: event for event in (client.next("market") for _ in range(3))}
        shown = listings_shown(api, actor, catalog_item)
        new_id = events["upsert"]["item"]["id"]
        assert set(shown) == {cheapest.id, new_id}
        assert events["upsert"] == {
            "type": "upsert",
            "game": "730",
            "source": "standard",
            "item": shown[new_id],
            "at": events["upsert"]["at"],
        }
        patched = shown[cheapest.id]
        assert events["patch"] == {
            "type": "patch",
            "game": "730",
            "source": "standard",
            "item": {
                "id": cheapest.id,
                "amount": 1,
                "marketPrice": patched["marketPrice"],
                "offer": patched["offer"],
            },
            "at": events["patch"]["at"],
        }
        assert events["remove"] == {
            "type": "remove",
            "game": "730",
            "source": "standard",
            "itemId": withdrawn.id,
        }
    repriced = SandboxListing.objects.get(pk=cheapest.id).price
    assert alices.seen[-2][1]["item"]["offer"]["price"] == float(
        (repriced * Decimal("1.05")).quantize(Decimal("0.01"), rounding="ROUND_CEILING")
    )
    assert bobs.seen[-2][1]["item"]["offer"]["price"] == float(
        (repriced * Decimal("1.10")).quantize(Decimal("0.01"), rounding="ROUND_CEILING")
    )
    assert not_subscribed.pending() == []


def test_a_bought_listing_goes_from_the_market(
    open_socket: Connect, api: APIClient, alice: Actor, bob: Actor, listing: SandboxListing
) -> None:
    watcher = subscribed(open_socket(bob.api_key))

    buy(api, alice, [listing])

    assert watcher.next("market") == {
        "type": "remove",
        "game": "730",
        "source": "standard",
        "itemId": listing.id,
    }
    assert [name for name, _ in watcher.seen] == ["market", "market"]  # no trade of Alice's


def test_a_reseeded_market_tells_subscribers_to_refetch_each_source(
    open_socket: Connect, alice: Actor
) -> None:
    first_game = subscribed(open_socket(alice.api_key))

    call_command("seed_sandbox", items=10, listings=20, stdout=io.StringIO())

    syncs = [first_game.next("market") for _ in range(2)]
    assert syncs == [
        {"type": "sync", "reason": "feed", "game": "730", "source": "standard"},
        {"type": "sync", "reason": "feed", "game": "730", "source": "instant"},
    ]


def test_only_subscribed_games_are_sent_and_unsubscribing_stops_them(
    open_socket: Connect, alice: Actor, catalog_item: CatalogItem
) -> None:
    make_listing(catalog_item, "10.00")
    make_listing(catalog_item, "12.00")
    second_game_only = subscribed(open_socket(alice.api_key), {"market": {"game": "252490"}})
    leaving = subscribed(open_socket(alice.api_key))
    staying = subscribed(open_socket(alice.api_key))

    assert leaving.emit("unsubscribe", CS) == {"market": {"game": "730"}, "subscribed": False}
    sandbox_market_churn(rng=Random(1))

    assert {staying.next("market")["type"] for _ in range(3)} == {"upsert", "patch", "remove"}
    assert leaving.pending() == []
    assert second_game_only.pending() == []


@pytest.mark.parametrize(
    "body",
    [None, {}, {"market": {}}, {"market": {"game": 1}}, {"market": {"game": "cs"}}, ["730"]],
)
def test_a_subscribe_without_a_traded_game_is_answered_with_an_error_and_nothing_else(
    open_socket: Connect, alice: Actor, body: object
) -> None:
    client = open_socket(alice.api_key)
    answer = client.emit("subscribe", body)
    assert answer["error"]["code"] == "VALIDATION_FAILED"
    assert client.emit("subscribe", CS) == SUBSCRIBED
    assert client.next("market") == SUBSCRIBED  # the first event it got
