"""Waxpeer's listing socket, read by the consumer ``manage.py supplier_socket`` runs
(``waxpeer_socket_serve``, here in a thread of the test) from a recorded socket server: each
event changes the snapshot through the poll's own replacement (the market version moves, the
``market`` feed hears of it), a dropped connection comes back and subscribes again, a refused
one is tried again with backoff, and nonsense is ignored without stopping the consumer."""

import threading
from collections.abc import Iterator
from decimal import Decimal

import orjson
import pytest

import core.feed
from core.market_version import market_version
from tests.faults.processes import wait_until
from tests.suppliers.conftest import WAXPEER_KEY
from tests.suppliers.socket_server import RecordedWaxpeerSocket
from trading.marketplace.suppliers.base import ListingChange, SupplierOffer
from trading.models import Supplier, SupplierListing
from trading.services.suppliers import supplier_listing_change, waxpeer_socket_serve

pytestmark = pytest.mark.django_db(transaction=True)

NAME = "AK-47 | Redline (Field-Tested)"
REF = "27165625733"


@pytest.fixture
def published(monkeypatch) -> list[dict]:
    """The feed messages sent after commit (their data)."""
    sent: list[dict] = []

    def publish(payload: bytes) -> bool:
        sent.append(orjson.loads(payload.split(b"\n", 1)[1]))
        return True

    monkeypatch.setattr(core.feed, "feed_publish", publish)
    return sent


@pytest.fixture
def socket_server(settings) -> Iterator[RecordedWaxpeerSocket]:
    server = RecordedWaxpeerSocket(WAXPEER_KEY)
    settings.WAXPEER_SOCKET_URL = server.url
    yield server
    server.stop()


@pytest.fixture
def silence_max() -> float:
    return 300.0


@pytest.fixture
def consumer(suppliers, catalog_item, socket_server, silence_max) -> Iterator[threading.Thread]:
    """``manage.py supplier_socket``'s loop, stopped at the end of the test."""
    stop = threading.Event()
    thread = threading.Thread(
        target=lambda: waxpeer_socket_serve(stop=stop, reconnect_max=0.5, silence_max=silence_max),
        daemon=True,
    )
    thread.start()
    yield thread
    stop.set()
    thread.join(15)
    assert not thread.is_alive()


def listing(**fields) -> dict:
    return {"game": "csgo", "item_id": REF, "price": 12_345, "name": NAME, **fields}


def connected() -> bool:
    return Supplier.objects.filter(pk="waxpeer", socket_connected_at__isnull=False).exists()


def price_of(listing_id: str) -> Decimal | None:
    row = SupplierListing.objects.filter(pk=listing_id).first()
    return row.supplier_price if row else None


def test_socket_events_change_the_market_as_a_poll_does(socket_server, consumer, published):
    socket_server.start()
    wait_until(lambda: socket_server.subscribed("csgo") == 1, "the subscription to csgo")
    wait_until(lambda: socket_server.subscribed("rust") == 1, "the subscription to rust")
    wait_until(connected, "the socket shown as up")
    version = market_version()

    socket_server.emit("new", listing(float=0.2512, paint_index=282))
    wait_until(lambda: price_of(f"waxpeer-{REF}") == Decimal("12.345"), "the listing")
    row = SupplierListing.objects.get(pk=f"waxpeer-{REF}")
    assert (row.price, row.wear, row.paint_index) == (Decimal("12.35"), Decimal("0.2512"), 282)
    wait_until(lambda: market_version() != version, "the market version moved")
    assert [(m["type"], m["item"]["id"]) for m in published] == [("upsert", f"waxpeer-{REF}")]

    socket_server.emit("update", listing(price=11_000))
    wait_until(lambda: price_of(f"waxpeer-{REF}") == Decimal("11.000"), "the new price")
    wait_until(lambda: len(published) == 2, "the patch")
    assert (published[1]["type"], published[1]["item"]["id"]) == ("patch", f"waxpeer-{REF}")

    # Not ours or nonsense: ignored, and the consumer carries on with the next event.
    socket_server.emit("new", listing(item_id="1", name="Not In The Catalog"))
    socket_server.emit("new", {"game": "csgo", "item_id": "x", "price": "lots"})
    socket_server.emit("new", listing(item_id="2"), game="dota2")
    socket_server.emit("removed", listing())
    wait_until(lambda: price_of(f"waxpeer-{REF}") is None, "the listing gone")
    wait_until(lambda: len(published) == 3, "the removal")
    assert published[2] == {
        "type": "remove",
        "game": "730",
        "source": "standard",
        "itemId": f"waxpeer-{REF}",
    }
    assert SupplierListing.objects.count() == 0


def test_a_dropped_socket_comes_back_subscribes_again_and_goes_on(socket_server, consumer):
    socket_server.start()
    wait_until(lambda: socket_server.subscribed() == 1, "the first subscription")
    wait_until(connected, "the socket shown as up")
    socket_server.drop_all()
    wait_until(lambda: socket_server.subscribed() == 2, "the subscription after the drop")
    assert socket_server.connects == 2

    socket_server.emit("new", listing())
    wait_until(lambda: price_of(f"waxpeer-{REF}") == Decimal("12.345"), "the listing")
    wait_until(connected, "the socket shown as up again")


def test_a_refused_connection_is_tried_again_until_it_is_let_in(socket_server, consumer):
    socket_server.api_key = "not the key we send"
    socket_server.start()
    wait_until(lambda: socket_server.refused >= 2, "the connection tried again")
    assert not connected()
    assert socket_server.connects == 0

    socket_server.api_key = WAXPEER_KEY  # the supplier lets us in again
    wait_until(lambda: socket_server.subscribed() == 1, "the subscription")
    socket_server.emit("new", listing())
    wait_until(lambda: price_of(f"waxpeer-{REF}") == Decimal("12.345"), "the listing")


def test_a_switched_off_supplier_takes_no_socket_change(suppliers, catalog_item):
    Supplier.objects.update_or_create(name="waxpeer", defaults={"enabled": False})
    change = ListingChange(
        game=730, offer=SupplierOffer(ref=REF, market_hash_name=NAME, price=Decimal("1.5"))
    )
    assert supplier_listing_change(name="waxpeer", change=change) == 0
    assert not SupplierListing.objects.exists()
    Supplier.objects.filter(pk="waxpeer").update(enabled=True)
    assert supplier_listing_change(name="waxpeer", change=change) == 1
    assert SupplierListing.objects.get().price == Decimal("1.50")


@pytest.mark.parametrize("silence_max", [1.5])
def test_a_connection_that_goes_silent_is_made_again(socket_server, consumer):
    """Nothing heard for longer than a busy feed is ever quiet: the connection is taken for dead
    (dropped on the other side unseen) and made again."""
    socket_server.start()
    wait_until(lambda: socket_server.subscribed() == 1, "the first subscription")
    wait_until(lambda: socket_server.subscribed() >= 2, "a new connection after the silence")
    assert socket_server.connects >= 2
