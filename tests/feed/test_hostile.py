"""Hostile sockets. First the class test, as tests/hostile does for the HTTP API: every packet of
the battery (tests/feed/battery.py), over a websocket and over long-polling, sent with no
Socket.IO CONNECT, after a CONNECT without a key (answered, then refused 0.2 s later) and after a
CONNECT with a live key, to a real feed process. After each, the process is up and another
merchant's socket, open since before the sweep, receives the event published for it.

Then the instances of issue 25, each of which the feed got wrong: one unauthenticated message of
100,000 ``[`` killed the process (SIGSEGV); messages were read up to 1,000,000 bytes, nested as
deep as they came, with binary attachments kept until the last arrived; and a socket could emit
the server's own ``connect`` and ``disconnect`` events. A refused message closes its own socket
and nothing else (docs/feed.md, "Limits")."""

import json
from collections.abc import Callable, Iterator

import orjson
import pytest
import requests

from core.feed import feed_publish
from tests.factories import Actor, add_api_key
from tests.feed.battery import BATTERY, DEEP, OVER_DEPTH, PLACEHOLDER, SUBSCRIBE, Attack
from tests.feed.harness import WAIT_SECONDS, FeedClient, FeedProcess
from tests.feed.raw import (
    TRANSPORTS,
    ClosedError,
    PollingTransport,
    Transport,
    WebSocketTransport,
    closed_by_server,
    expect,
    socketio_connect,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

Connect = Callable[..., FeedClient]
KEY_MODES = ("no CONNECT", "CONNECT without a key", "CONNECT with a key")
DOCUMENTED_MESSAGE_LIMIT = 16 * 1024  # docs/feed.md, "Limits"
RESERVED_EVENTS = (
    "connect",
    "connect_error",
    "disconnect",
    "disconnecting",
    "newListener",
    "removeListener",
)


def publish_trade(actor: Actor, sequence: int) -> dict:
    """A ``trade`` event for ``actor``'s merchant on the bus; what its sockets should receive."""
    merchant_id = str(actor.merchant.pk)
    header = {
        "kind": "merchant",
        "merchantId": merchant_id,
        "event": "trade",
        "order": f"trade:hostile-{merchant_id}",
        "sequence": sequence,
    }
    sent = {"trade": {"sequence": sequence}}
    assert feed_publish(orjson.dumps(header) + b"\n" + orjson.dumps(sent))
    return sent


class Witness:
    """A socket of a merchant that no attack concerns. ``problem()`` publishes an event for its
    merchant and tells what went wrong if the socket does not receive it."""

    def __init__(self, client: FeedClient, actor: Actor) -> None:
        self.client = client
        self.actor = actor
        self.sequence = 0

    def problem(self) -> str | None:
        self.sequence += 1
        sent = publish_trade(self.actor, self.sequence)
        try:
            received = self.client.next("trade")
        except AssertionError as exc:
            return str(exc)
        return None if received == sent else f"received {received} instead of {sent}"


@pytest.fixture
def witness(open_socket: Connect, bob: Actor) -> Witness:
    watching = Witness(open_socket(bob.api_key), bob)
    assert watching.problem() is None
    return watching


def opened(feed: FeedProcess, transport: str, mode: str, api_key: str) -> Transport:
    """An Engine.IO session, and the Socket.IO CONNECT of ``mode``."""
    session: Transport = TRANSPORTS[transport](feed.url)
    if mode == "CONNECT without a key":
        session.send("40")
    elif mode == "CONNECT with a key":
        socketio_connect(session, {"apiKey": api_key})
    return session


def attack_once(feed: FeedProcess, transport: str, mode: str, api_key: str, attack: Attack) -> None:
    session = opened(feed, transport, mode, api_key)
    sessions = [session]
    try:
        target = session
        if attack.upgrade and transport == "polling":
            target = WebSocketTransport(feed.url, sid=session.sid)
            sessions.append(target)
        for frame in attack.frames:
            target.send(frame)
    finally:
        for each in reversed(sessions):
            each.close()


@pytest.mark.parametrize("mode", KEY_MODES)
@pytest.mark.parametrize("transport", list(TRANSPORTS))
def test_the_feed_serves_other_merchants_after_every_hostile_packet(
    feed: FeedProcess, witness: Witness, alice: Actor, transport: str, mode: str
) -> None:
    failures = []
    for attack in BATTERY:
        try:
            attack_once(feed, transport, mode, alice.api_key, attack)
        except Exception as exc:
            failures.append(f"[{attack.name}] the attacking client failed: {exc!r}")
        problem = witness.problem()
        if not feed.process.alive():
            pytest.fail(f"[{attack.name}] the feed died\n{feed.process.log_tail()}")
        if problem:
            failures.append(f"[{attack.name}] the other merchant's socket: {problem}")
            break  # it is gone: what follows could not be judged
    assert not failures, "\n".join(failures) + f"\n{feed.process.log_tail()}"


# The instances of issue 25.


@pytest.mark.parametrize("transport", list(TRANSPORTS))
def test_the_message_that_killed_the_feed_closes_its_session_and_the_feed_serves_on(
    feed: FeedProcess, witness: Witness, transport: str
) -> None:
    attacker = TRANSPORTS[transport](feed.url)  # no key, no Socket.IO CONNECT
    attacker.send("42" + DEEP)

    assert closed_by_server(attacker)
    assert feed.process.alive(), feed.process.log_tail()
    assert witness.problem() is None


def test_a_long_polling_packet_that_engine_io_refuses_is_answered(
    feed: FeedProcess, witness: Witness
) -> None:
    """python-engineio answers a POST holding a packet it refuses (here a PING: only servers
    ping) once the session's CLOSE packet has left, on the client's next poll. A client that
    never polled again held that request, its session and about 22 KB of the feed forever."""
    session = PollingTransport(feed.url)
    query = {"EIO": "4", "transport": "polling", "sid": session.sid}

    answer = requests.post(f"{feed.url}/socket.io/", params=query, data="2", timeout=WAIT_SECONDS)

    assert answer.status_code == 400
    assert closed_by_server(session)  # and forgotten: a session, not a server error
    assert witness.problem() is None


@pytest.mark.parametrize("transport", list(TRANSPORTS))
def test_the_handshake_announces_the_message_limit(feed: FeedProcess, transport: str) -> None:
    session = TRANSPORTS[transport](feed.url)
    try:
        assert session.handshake["maxPayload"] == DOCUMENTED_MESSAGE_LIMIT
    finally:
        session.close()


def refused(feed: FeedProcess, transport: str, api_key: str, *frames: str | bytes) -> Transport:
    """An admitted socket that sends ``frames`` (after checking it is served)."""
    session = TRANSPORTS[transport](feed.url)
    socketio_connect(session, {"apiKey": api_key})
    session.send(f"420[{SUBSCRIBE}]")
    assert expect(session, lambda packet: packet.startswith("430")).startswith('430[{"type"')
    for frame in frames:
        session.send(frame)
    return session


@pytest.fixture
def alices_other_socket(open_socket: Connect, alice: Actor) -> Witness:
    """Another socket of the same merchant: a refused message closes only the socket it came
    on."""
    other = Witness(open_socket(alice.api_key), alice)
    assert other.problem() is None
    return other


@pytest.mark.parametrize("transport", list(TRANSPORTS))
@pytest.mark.parametrize(
    "frames",
    [
        # Valid, and what the feed serves, but over the message limit.
        (f'421[{SUBSCRIBE},"{"a" * DOCUMENTED_MESSAGE_LIMIT}"]',),
        # Nested one level deeper than the limit (MAX_DEPTH, as the API's request bodies).
        (f'421["subscribe",{OVER_DEPTH}]',),
        # A binary attachment.
        (f'451-1["subscribe",{PLACEHOLDER}]', b"x"),
        # Not a payload of its type.
        ('421"subscribe"',),
        ("41{}",),
    ],
    ids=["over the size limit", "over the depth limit", "binary", "not an array", "data"],
)
def test_a_refused_message_closes_its_socket_only(
    feed: FeedProcess,
    witness: Witness,
    alices_other_socket: Witness,
    alice: Actor,
    transport: str,
    frames: tuple[str | bytes, ...],
) -> None:
    session = refused(feed, transport, alice.api_key, *frames)

    assert closed_by_server(session)
    assert alices_other_socket.problem() is None
    assert witness.problem() is None


@pytest.mark.parametrize("name", RESERVED_EVENTS)
def test_a_socket_that_emits_a_reserved_event_is_closed(
    feed: FeedProcess, witness: Witness, alice: Actor, name: str
) -> None:
    session = refused(feed, "websocket", alice.api_key, "42" + json.dumps([name, {}]))

    assert closed_by_server(session)
    assert witness.problem() is None


@pytest.fixture
def websocket_sessions() -> Iterator[list[Transport]]:
    sessions: list[Transport] = []
    yield sessions
    for session in sessions:
        session.close()


def test_a_socket_cannot_admit_itself_again_with_an_address_of_its_own(
    feed: FeedProcess, alice: Actor, bob: Actor, websocket_sessions: list[Transport]
) -> None:
    """python-socketio passes an EVENT named ``connect`` to the server's connect handler with
    the client's data as the environ: Alice's socket re-admitted itself with Bob's key, which
    only 10.9.9.0/24 may use, from an address it named, and received Bob's trades."""
    restricted = add_api_key(bob.merchant, ip_whitelist=("10.9.9.0/24",))
    session = WebSocketTransport(feed.url)
    websocket_sessions.append(session)
    socketio_connect(session, {"apiKey": alice.api_key})
    forged_environ = {"asgi.scope": {"client": ["10.9.9.9", 4242]}, "REMOTE_ADDR": "10.9.9.9"}
    session.send("42" + json.dumps(["connect", forged_environ, {"apiKey": restricted}]))

    # Bob's trades until the socket is closed or one reaches it (the re-admission reads the
    # database first, so one published at once could come too early).
    for sequence in range(1, 11):
        publish_trade(bob, sequence)
        try:
            answer = expect(session, lambda p: p == "1" or p.startswith('42["trade"'), 1.5)
        except TimeoutError:
            continue
        except ClosedError:
            return  # closed without a CLOSE packet: closed all the same
        assert answer == "1", f"Bob's trade reached Alice's socket: {answer}"
        return
    pytest.fail("the socket was neither closed nor sent Bob's trades")


@pytest.mark.parametrize("key", ["tsk_\x00", "\ud800"], ids=["NUL", "lone surrogate"])
def test_a_key_no_key_can_be_is_refused_as_an_unknown_one(
    feed: FeedProcess, witness: Witness, websocket_sessions: list[Transport], key: str
) -> None:
    """A NUL went to the database, which cannot hold one, and the feed took the error for the
    database being down: it cut the transport, with a traceback, instead of refusing the key. A
    lone surrogate could not be hashed, and the socket was left open."""
    session = WebSocketTransport(feed.url)
    websocket_sessions.append(session)
    socketio_connect(session, {"apiKey": key})

    # Refused as an unknown key is: a Socket.IO DISCONNECT, not the transport cut.
    assert expect(session, lambda packet: packet in ("41", "1")) == "41"
    assert witness.problem() is None
