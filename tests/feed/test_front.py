"""The quick start's front (``manage.py feed --api-upstream``, feed/front.py) as clients meet it:
a real feed process forwarding to a web server on a Unix socket (tests/feed/upstream.py) that
shows what each forwarded request carried.

A forwarder keeps nothing between callers: no cookie, credential or header of one client goes
with another's request or comes back in another's answer, hop-by-hop headers end at the front,
and a request goes with the client's own ``Accept-Encoding`` or none. The front bounds a request's
head: over ``MAX_HEAD_BYTES`` it is refused in the API's envelope without being read whole, and a
connection whose head has not arrived whole within ``FEED_FRONT_HEAD_TIMEOUT_SECONDS`` (short
here) is closed, however its bytes trickle in; the clock stops once the head is read."""

import contextlib
import gzip
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from feed.front_server import MAX_HEAD_BYTES
from tests.factories import make_actor
from tests.faults.processes import wait_until
from tests.feed.harness import WAIT_SECONDS, FeedClient, FeedProcess
from tests.feed.upstream import Upstream, upstream
from tests.hostile.battery import Attack
from tests.hostile.wire import Answer, refusal_problem, send

pytestmark = pytest.mark.django_db(transaction=True)

HEAD_TIMEOUT_SECONDS = 2  # FEED_FRONT_HEAD_TIMEOUT_SECONDS of the front under test
QUIET_SECONDS = 0.2  # a trickling client sends its next byte after this much silence


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    with upstream(tmp_path_factory.mktemp("front") / "web.sock") as state:
        yield state


@pytest.fixture(scope="module")
def module_front(
    django_db_setup: None,
    tmp_path_factory: pytest.TempPathFactory,
    feed_channel: str,
    web: Upstream,
) -> Iterator[FeedProcess]:
    process = FeedProcess(
        tmp_path_factory.mktemp("front") / "front.log",
        channel=feed_channel,
        api_upstream=web.api_upstream,
        FEED_FRONT_HEAD_TIMEOUT_SECONDS=str(HEAD_TIMEOUT_SECONDS),
    )
    yield process.start()
    process.stop()


@pytest.fixture
def front(module_front: FeedProcess, transactional_db: None, web: Upstream) -> FeedProcess:
    if not module_front.process.alive():
        module_front.start()
    web.release.clear()
    return module_front


@pytest.fixture(autouse=True)
def _nothing_held(web: Upstream) -> Iterator[None]:
    yield
    web.release.set()


def get(front: FeedProcess, path: str, *headers: tuple[str, str]) -> Answer:
    """A GET on a connection of its own with exactly these headers (and ``Host``)."""
    return send(front.port, Attack("front", "GET", path, headers=headers), {})


def connect(front: FeedProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", front.port), timeout=WAIT_SECONDS)


def read_until_closed(sock: socket.socket) -> bytes:
    """What the front sends until it closes the connection; fails if it keeps it open."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {WAIT_SECONDS:.0f} s: {received[:300]!r}") from None
    except ConnectionResetError:
        pass  # closed with bytes of ours unread
    return received


def trickle_until_closed(sock: socket.socket, head: bytes) -> None:
    """Sends ``head``, then one more header byte each time the connection has been quiet for
    ``QUIET_SECONDS``, until the front closes it; fails if it is still open after
    ``WAIT_SECONDS`` or answers anything."""
    sock.sendall(head)
    sock.settimeout(QUIET_SECONDS)
    give_up = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < give_up:
        try:
            answered = sock.recv(65536)
        except TimeoutError:
            try:
                sock.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                return
            continue
        except ConnectionResetError:
            return
        assert answered == b"", answered[:300]
        return
    raise AssertionError(f"a trickling head kept its connection for {WAIT_SECONDS:.0f} s")


# A forwarder keeps nothing between callers.


def test_a_login_answered_to_one_client_is_not_anyone_elses(front: FeedProcess, web: Upstream):
    # Given Alice logged in: her answer set her session cookie and gave her credentials
    login = get(front, "/login/alice", ("Authorization", "Bearer alice-token"))
    assert login.status == 200, login
    assert login.headers["set-cookie"].startswith("sessionid=alice-session;")
    assert login.headers["authentication-info"] == 'nextnonce="alice-nonce"'

    # When Bob, sending no credentials, asks next
    bob = get(front, "/echo?as=bob")

    # Then nothing of hers went with his request, nor came back to him
    (seen,) = web.seen_at("/echo?as=bob")
    assert {"cookie", "authorization"} & seen.names == set(), seen
    assert not [header for header in seen.headers if "alice" in header[1]], seen
    assert {"set-cookie", "authentication-info"} & set(bob.headers) == set(), bob.headers


def test_two_clients_at_once_each_send_and_get_only_their_own(front: FeedProcess, web: Upstream):
    """Alice and Bob log in again and again at the same time, each with the session cookie and
    token their client keeps, over connections the front pools to the web server."""

    def client(who: str) -> list[str]:
        cookies = []
        for turn in range(12):
            answer = get(
                front,
                f"/login/{who}?turn={turn}",
                ("X-Client", who),
                ("Authorization", f"Bearer {who}-token"),
                ("Cookie", f"sessionid={who}-session"),
            )
            assert answer.status == 200, answer
            cookies.append(answer.headers["set-cookie"].split(";")[0])
        return cookies

    with ThreadPoolExecutor(max_workers=2) as pool:
        alice, bob = pool.map(client, ["alice", "bob"])

    assert set(alice) == {"sessionid=alice-session"}
    assert set(bob) == {"sessionid=bob-session"}
    seen = [request for request in web.seen if request.values("x-client")]
    assert len(seen) == 24
    for request in seen:
        (who,) = request.values("x-client")
        assert request.values("authorization") == [f"Bearer {who}-token"], request
        assert request.values("cookie") == [f"sessionid={who}-session"], request
    # And a client after them gets nothing of theirs
    get(front, "/echo?as=carol")
    (carol,) = web.seen_at("/echo?as=carol")
    assert {"cookie", "authorization", "x-client"} & carol.names == set(), carol


def test_the_forwarded_request_carries_the_clients_headers_and_no_others(
    front: FeedProcess, web: Upstream
):
    answer = get(front, "/echo?exact", ("X-Custom", "mine"))

    assert answer.status == 200, answer
    (seen,) = web.seen_at("/echo?exact")
    # Host as the client sent it, and the client's address appended as nginx does.
    assert seen.headers == (
        ("host", f"127.0.0.1:{front.port}"),
        ("x-custom", "mine"),
        ("x-forwarded-for", "127.0.0.1"),
    )


def test_hop_by_hop_headers_end_at_the_front_both_ways(front: FeedProcess, web: Upstream):
    """RFC 9110, section 7.6.1: a proxy removes the connection's own headers, and every header
    its ``Connection`` names, from what it forwards."""
    answer = get(
        front,
        "/echo?hops",
        ("Connection", "keep-alive, X-Private"),
        ("X-Private", "for the front only"),
        ("Keep-Alive", "timeout=5"),
        ("Proxy-Authorization", "Basic dXNlcjpwYXNz"),
        ("TE", "trailers"),
        ("X-Kept", "end to end"),
    )

    assert answer.status == 200, answer
    (seen,) = web.seen_at("/echo?hops")
    hop_by_hop = {"connection", "x-private", "keep-alive", "proxy-authorization", "te"}
    assert hop_by_hop & seen.names == set(), seen
    assert seen.values("x-kept") == ["end to end"]
    # The web server's answer named X-Upstream-Hop in its Connection header.
    assert "x-upstream-hop" not in answer.headers, answer.headers
    assert answer.headers["vary"] == "Accept-Encoding"


@pytest.mark.parametrize(
    ("accept_encoding", "compressed"),
    [(None, False), ("gzip", True), ("identity", False), ("br;q=1, gzip;q=0.5", True)],
    ids=["none", "gzip", "identity", "br-or-gzip"],
)
def test_the_answer_is_encoded_as_the_client_asked(
    front: FeedProcess, web: Upstream, accept_encoding: str | None, compressed: bool
):
    path = f"/echo?encoding={compressed}-{len(accept_encoding or '')}"
    headers = [] if accept_encoding is None else [("Accept-Encoding", accept_encoding)]

    answer = get(front, path, *headers)

    assert answer.status == 200, answer
    (seen,) = web.seen_at(path)
    assert seen.values("accept-encoding") == ([] if accept_encoding is None else [accept_encoding])
    assert answer.headers.get("content-encoding") == ("gzip" if compressed else None)
    body = gzip.decompress(answer.body) if compressed else answer.body
    assert json.loads(body)["headers"]


# The request's head, bounded in size.


@pytest.mark.parametrize(
    ("head", "field", "reason"),
    [
        (
            b"GET /echo?one-big-header HTTP/1.1\r\nHost: front\r\nX-Big: "
            + b"a" * MAX_HEAD_BYTES
            + b"\r\n\r\n",
            "headers",
            "The headers are too large.",
        ),
        (
            b"GET /echo?many-headers HTTP/1.1\r\nHost: front\r\n"
            + (b"X-Many: " + b"a" * 1000 + b"\r\n") * (MAX_HEAD_BYTES // 1000 + 1)
            + b"\r\n",
            "headers",
            "The headers are too large.",
        ),
        (
            b"GET /echo?long-url=" + b"a" * MAX_HEAD_BYTES + b" HTTP/1.1\r\nHost: front\r\n\r\n",
            "url",
            "The URL is too long.",
        ),
    ],
    ids=["one-big-header", "many-headers", "long-url"],
)
def test_a_head_over_the_limit_is_refused_in_the_envelope(
    front: FeedProcess, web: Upstream, head: bytes, field: str, reason: str
):
    with connect(front) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head)
        response = http.client.HTTPResponse(sock)
        response.begin()
        answer = Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
        assert read_until_closed(sock) == b""

    assert response.reason == "Bad Request"

    assert refusal_problem(answer, "VALIDATION_FAILED") is None, answer
    assert json.loads(answer.body)["error"]["fields"] == {field: reason}
    path = head.split(b" ")[1].decode()
    assert not [request for request in web.seen if request.path == path]


def test_a_head_the_web_server_and_the_application_take_is_forwarded_whole(
    front: FeedProcess, web: Upstream
):
    """gunicorn's longest request line and the application's 16 KiB of headers fit."""
    target = "/echo?fits=" + "a" * (8190 - len("GET /echo?fits= HTTP/1.1"))
    values = ["b" * 5400, "c" * 5400, "d" * 5400]

    answer = get(front, target, *((f"X-Part-{n}", value) for n, value in enumerate(values)))

    assert answer.status == 200, answer
    (seen,) = web.seen_at(target)
    assert [seen.values(f"x-part-{n}") for n in range(3)] == [[value] for value in values]


def test_a_megabyte_header_is_refused_before_it_is_read_whole(front: FeedProcess, web: Upstream):
    """The head never ends: the front answers after reading at most its limit (and what one
    read brought), where it once kept reading for as long as the client sent."""
    with connect(front) as sock:
        head = b"GET /echo?megabyte HTTP/1.1\r\nHost: front\r\nX-Big: " + b"a" * 1_000_000

        def send_head() -> None:
            with contextlib.suppress(OSError):  # the front closes before taking it all
                sock.sendall(head)

        sending = threading.Thread(target=send_head)
        sending.start()
        try:
            response = http.client.HTTPResponse(sock)
            response.begin()
            answer = Answer(
                response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
            )
        finally:
            with contextlib.suppress(OSError):  # closed by the front already
                sock.shutdown(socket.SHUT_RDWR)
            sending.join(WAIT_SECONDS)

    assert refusal_problem(answer, "VALIDATION_FAILED") is None, answer
    assert json.loads(answer.body)["error"]["fields"] == {"headers": "The headers are too large."}
    assert web.seen_at("/echo?megabyte") == []


# The request's head, bounded in time.


def test_connections_that_send_nothing_are_closed(front: FeedProcess):
    """Half-open connections last the head's timeout, however many there are."""
    sockets = [connect(front) for _ in range(20)]
    try:
        assert [read_until_closed(sock) for sock in sockets] == [b""] * 20
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.parametrize("after_an_answer", [False, True], ids=["new", "kept-alive"])
def test_a_head_trickling_in_is_closed_however_its_bytes_come(
    front: FeedProcess, after_an_answer: bool
):
    """A byte after every short silence (slowloris): uvicorn's keep-alive clock restarts on
    every byte; the head's does not. On a kept-alive connection the clock starts again when the
    previous answer is sent."""
    with connect(front) as sock:
        if after_an_answer:
            sock.sendall(b"GET /echo?first HTTP/1.1\r\nHost: front\r\n\r\n")
            response = http.client.HTTPResponse(sock)
            response.begin()
            assert response.status == 200
            response.read()

        trickle_until_closed(sock, b"GET /echo?trickle HTTP/1.1\r\nHost: front\r\nX-Pad: ")


def test_the_clock_stops_once_the_head_is_read(front: FeedProcess, web: Upstream):
    """An answer slower than the head's timeout, and a socket open longer, are not cut: each
    outlives a connection opened after it and closed for sending nothing."""
    actor = make_actor(name="Front")
    feed = FeedClient(front.url).connect(auth={"apiKey": actor.api_key})
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            held = pool.submit(get, front, "/held")
            wait_until(lambda: web.seen_at("/held"), "the held request at the web server")

            with connect(front) as idle:
                assert read_until_closed(idle) == b""

            web.release.set()
            assert held.result(WAIT_SECONDS).status == 200
        answer = feed.emit("subscribe", {"market": {"game": "730"}})
        assert answer == {"type": "sync", "reason": "subscribe", "game": "730"}
    finally:
        feed.close()
