"""The dispatcher's handling of slow sockets and late messages, with a recording sink in place
of engine.io (the backlog a slow client leaves cannot be produced on demand through a real
socket): market events are dropped for a socket that is behind and a ``sync`` owed instead;
merchant events are not; a socket too far behind is closed."""

import asyncio
from decimal import Decimal

import orjson
import pytest

from feed.dispatch import Dispatcher, OrderGuard
from feed.sockets import FeedSocket, Registry

SOFT, HARD = 10, 50


class RecordingSink:
    def __init__(self) -> None:
        self.backlogs: dict[str, int] = {}
        self.sent: dict[str, list[str]] = {}
        self.closed: list[str] = []

    def backlog(self, eio_sid: str) -> int | None:
        return self.backlogs.get(eio_sid)

    async def send(self, eio_sid: str, packet: str) -> None:
        self.sent.setdefault(eio_sid, []).append(packet)

    async def close(self, eio_sid: str) -> None:
        self.closed.append(eio_sid)

    def events(self, eio_sid: str) -> list[list[object]]:
        return [orjson.loads(packet[1:]) for packet in self.sent.get(eio_sid, [])]


@pytest.fixture
def world() -> tuple[Registry, RecordingSink, Dispatcher, FeedSocket]:
    registry, sink = Registry(), RecordingSink()

    async def no_access_change(merchant_id: str) -> None:
        raise AssertionError(merchant_id)

    dispatcher = Dispatcher(
        registry=registry,
        sink=sink,
        access_changed=no_access_change,
        backlog_soft=SOFT,
        backlog_hard=HARD,
    )
    socket = FeedSocket("s1", "e1", "m1", key_id=1, address="127.0.0.1", fee_rate=Decimal(0))
    registry.add(socket)
    registry.subscribe(socket, 730)
    sink.backlogs["e1"] = 0
    return registry, sink, dispatcher, socket


def removal(listing: str, source: str = "standard") -> bytes:
    body = {"type": "remove", "game": "730", "source": source, "itemId": listing}
    return b'{"kind":"market","game":730}\n' + orjson.dumps(body)


def trade(sequence: int) -> bytes:
    head = {"kind": "merchant", "merchantId": "m1", "event": "trade", "order": "trade:t1"}
    return orjson.dumps(head | {"sequence": sequence}) + b"\n" + orjson.dumps({"trade": sequence})


def test_a_socket_behind_misses_market_events_and_gets_a_sync_once_caught_up(world) -> None:
    _, sink, dispatcher, socket = world

    async def scenario() -> None:
        await dispatcher.deliver(removal("a"))
        sink.backlogs["e1"] = SOFT
        await dispatcher.deliver(removal("b"))
        await dispatcher.deliver(trade(1))  # merchant events still go out
        await dispatcher.send_owed_syncs()  # still behind: nothing owed is sent yet
        sink.backlogs["e1"] = SOFT // 2 - 1
        await dispatcher.deliver(removal("c"))  # the sync is owed first: the client refetches
        await dispatcher.send_owed_syncs()
        await dispatcher.deliver(removal("d"))

    asyncio.run(scenario())

    assert sink.events("e1") == [
        ["market", {"type": "remove", "game": "730", "source": "standard", "itemId": "a"}],
        ["trade", {"trade": 1}],
        ["market", {"type": "sync", "reason": "feed", "game": "730", "source": "standard"}],
        ["market", {"type": "remove", "game": "730", "source": "standard", "itemId": "d"}],
    ]
    assert socket.missed == set()
    assert dispatcher.stats["dropped"] == 1


def test_a_socket_too_far_behind_is_closed(world) -> None:
    _, sink, dispatcher, _ = world
    sink.backlogs["e1"] = HARD

    asyncio.run(dispatcher.deliver(trade(1)))

    assert sink.closed == ["e1"]
    assert sink.sent == {}


def test_after_a_gap_in_the_bus_every_market_subscriber_is_told_to_refetch(world) -> None:
    registry, sink, dispatcher, socket = world
    registry.subscribe(socket, 252490)

    asyncio.run(dispatcher.resumed())

    assert sorted(
        (event[1]["game"], event[1]["source"])
        for event in sink.events("e1")  # type: ignore[index]
    ) == [("252490", "instant"), ("252490", "standard"), ("730", "instant"), ("730", "standard")]


def test_the_order_guard_keeps_the_most_recently_changed_subjects() -> None:
    guard = OrderGuard(memory=2)
    assert guard.admit("a", 1)
    assert guard.admit("b", 1)
    assert not guard.admit("a", 1)
    assert guard.admit("a", 2)  # "a" is now the most recent
    assert guard.admit("c", 1)  # forgets "b"
    assert guard.admit("b", 1)
    assert not guard.admit("c", 1)


def test_a_malformed_message_is_counted_and_skipped(world) -> None:
    _, sink, dispatcher, _ = world
    asyncio.run(dispatcher.deliver(b"not json\n{}"))
    asyncio.run(dispatcher.deliver(trade(1)))
    assert dispatcher.stats["malformed"] == 1
    assert sink.events("e1") == [["trade", {"trade": 1}]]
