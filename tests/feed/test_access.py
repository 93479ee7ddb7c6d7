"""Who may open a socket: the API's own key rules. A refused key is accepted, then disconnected
at once without any event (decisions section 10); a revoked key's sockets close within seconds."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import transaction

from merchants.callers import callers_changed
from merchants.models import ApiKey, Merchant, Scope
from merchants.services import api_key_revoke
from tests.factories import Actor, add_api_key
from tests.faults.processes import wait_until
from tests.feed.harness import FeedClient, FeedProcess

pytestmark = pytest.mark.django_db(transaction=True)

Connect = Callable[..., FeedClient]
SUBSCRIBE = {"market": {"game": "730"}}
SUBSCRIBED = {"type": "sync", "reason": "subscribe", "game": "730"}


@pytest.fixture(scope="module")
def module_feed(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory, feed_channel: str
) -> Iterator[FeedProcess]:
    """This module's feed re-reads every key only hourly: a change it sees within seconds was
    found through the auth epoch (or a revoke's own event)."""
    process = FeedProcess(
        tmp_path_factory.mktemp("feed") / "feed.log",
        channel=feed_channel,
        FEED_RECHECK_FULL_SECONDS="3600",
    )
    yield process.start()
    process.stop()


def refused(client: FeedClient) -> None:
    """Connected, then disconnected by the server, having received nothing."""
    client.wait_disconnected()
    assert client.pending() == []


def admitted(client: FeedClient) -> None:
    """Open and served: its subscribe is answered (an event only an admitted socket gets)."""
    assert client.emit("subscribe", SUBSCRIBE) == SUBSCRIBED
    assert client.next("market") == SUBSCRIBED
    assert not client.disconnected.is_set()


@pytest.mark.parametrize("how", ["query", "header", "auth"])
def test_a_live_key_is_admitted_however_it_is_sent(
    open_socket: Connect, alice: Actor, how: str
) -> None:
    admitted(open_socket(alice.api_key, how=how))


def test_unknown_and_missing_keys_are_disconnected_without_an_event(
    open_socket: Connect, alice: Actor
) -> None:
    refused(open_socket("tsk_" + "x" * 40))
    refused(open_socket(alice.api_key[:-1] + ("A" if alice.api_key[-1] != "A" else "B")))
    refused(open_socket())


def test_a_revoked_key_is_refused(open_socket: Connect, alice: Actor) -> None:
    key = ApiKey.objects.get(merchant=alice.merchant)
    api_key_revoke(api_key=key)
    refused(open_socket(alice.api_key))


def test_a_key_without_core_access_is_refused(open_socket: Connect, alice: Actor) -> None:
    ledger_only = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,))
    refused(open_socket(ledger_only))
    admitted(open_socket(alice.api_key))


def test_a_disabled_merchants_key_is_refused(open_socket: Connect, alice: Actor) -> None:
    Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
    refused(open_socket(alice.api_key))


def test_an_address_outside_the_keys_allow_list_is_refused(
    open_socket: Connect, alice: Actor
) -> None:
    elsewhere = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
    here = add_api_key(alice.merchant, ip_whitelist=("127.0.0.0/8",))
    refused(open_socket(elsewhere))
    admitted(open_socket(here))


def test_revoking_a_key_closes_its_sockets_within_seconds(
    open_socket: Connect, alice: Actor
) -> None:
    other_key = add_api_key(alice.merchant)
    doomed = [open_socket(alice.api_key), open_socket(alice.api_key, how="header")]
    survivor = open_socket(other_key)
    for client in [*doomed, survivor]:
        admitted(client)

    key = ApiKey.objects.get(merchant=alice.merchant, prefix=alice.api_key[: ApiKey.PREFIX_LENGTH])
    with transaction.atomic():
        api_key_revoke(api_key=key)

    for client in doomed:
        client.wait_disconnected(timeout=5)
    admitted_again = survivor.emit("subscribe", {"market": {"game": "252490"}})
    assert admitted_again == {"type": "sync", "reason": "subscribe", "game": "252490"}
    assert not survivor.disconnected.is_set()


def test_a_merchant_disabled_in_the_admin_loses_its_sockets_within_seconds(
    open_socket: Connect, feed: FeedProcess, alice: Actor, bob: Actor
) -> None:
    """The admin's save announces the change (``callers_changed``: a new auth epoch at commit);
    the feed's next look at the epoch re-reads the keys."""
    alices, bobs = open_socket(alice.api_key), open_socket(bob.api_key)
    admitted(alices)
    admitted(bobs)
    # Past the feed's first re-read (it reads everything once): from now on only a new epoch
    # makes it read the keys again.
    wait_until(lambda: feed.health().get("rechecks", 0) >= 1, "the first re-read")

    with transaction.atomic():
        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
        callers_changed()

    alices.wait_disconnected(timeout=10)
    assert alices.pending() == []
    assert bobs.emit("unsubscribe", SUBSCRIBE) == {"market": {"game": "730"}, "subscribed": False}


def test_a_merchant_disabled_behind_the_services_back_loses_its_sockets_at_the_full_recheck(
    open_socket: Connect, alice: Actor, bob: Actor, feed_channel: str, tmp_path: Path
) -> None:
    """Nothing announces a change written straight to the table: the full re-read of every key
    (every ``FEED_RECHECK_FULL_SECONDS``, here 1 s) finds it."""
    feed = FeedProcess(
        tmp_path / "feed.log", channel=feed_channel, FEED_RECHECK_FULL_SECONDS="1"
    ).start()
    try:
        alices, bobs = open_socket(alice.api_key, to=feed), open_socket(bob.api_key, to=feed)
        admitted(alices)
        admitted(bobs)

        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)

        alices.wait_disconnected(timeout=10)
        assert alices.pending() == []
        unsubscribed = bobs.emit("unsubscribe", SUBSCRIBE)
        assert unsubscribed == {"market": {"game": "730"}, "subscribed": False}
    finally:
        feed.stop()
