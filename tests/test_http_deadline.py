"""core.http: an exchange through a deadline session ends by its deadline whatever the server
drips (status line, headers, body), on a new or a kept-alive connection, and one that ended in
time is left alone. Times are bounds measured with time.monotonic, never slept."""

import time

import pytest
import requests
import websocket

from core.http import DeadlineExceeded, DeadlineWebSocket, deadline, deadline_session
from tests.dripping import (
    HEADERS_DRIPPED,
    STATUS_LINE_DRIPPED,
    WEBSOCKET_HEADERS_DRIPPED,
    dripping,
)

DEADLINE = 1.0
# What a loaded test machine may add to a deadline before the caller has its error.
SLACK = 1.5


@pytest.mark.parametrize("head", [HEADERS_DRIPPED, STATUS_LINE_DRIPPED], ids=["headers", "status"])
def test_a_dripped_head_ends_at_the_deadline_not_at_the_read_timeout(head):
    session = deadline_session()
    with dripping(head=head) as server:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="timed out"), deadline(DEADLINE):
            session.get(server.url, timeout=(1, 5))  # each read waits 0.1 s at most
        elapsed = time.monotonic() - started

        (connection,) = server.wait_ended()
    assert DEADLINE <= elapsed < DEADLINE + SLACK
    assert connection.ended_at is not None
    assert connection.ended_at - connection.opened_at < DEADLINE + SLACK


@pytest.mark.parametrize("closing", [b"", b"Connection: close\r\n"], ids=["kept", "closed"])
def test_a_dripped_body_ends_at_the_deadline(closing):
    session = deadline_session()
    dripped_body = (b"HTTP/1.1 200 OK\r\n" + closing + b"Content-Length: 9999\r\n\r\n", b"")
    with dripping(head=dripped_body) as server:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded), deadline(DEADLINE):
            session.get(server.url, timeout=(1, 5))
        assert time.monotonic() - started < DEADLINE + SLACK


def test_a_kept_alive_connection_is_watched_by_the_next_block():
    session = deadline_session()
    with dripping(answered=1) as server:
        with deadline(DEADLINE):
            assert session.get(server.url, timeout=(1, 5)).content == b"{}"

        started = time.monotonic()
        with pytest.raises(DeadlineExceeded), deadline(DEADLINE):
            session.get(server.url, timeout=(1, 5))
        assert time.monotonic() - started < DEADLINE + SLACK
        assert len(server.connections) == 1  # the second request went on the first connection


def test_an_exchange_that_ended_in_time_keeps_its_connection():
    session = deadline_session()
    with dripping(answered=2) as server:
        with deadline(DEADLINE) as first:
            assert session.get(server.url, timeout=(1, 5)).status_code == 200
        first.expire()  # what the watchdog does when the time comes: nothing, it is over

        with deadline(DEADLINE):
            assert session.get(server.url, timeout=(1, 5)).status_code == 200
        assert len(server.connections) == 1


def test_the_block_raises_its_own_errors_when_in_time():
    with pytest.raises(requests.ConnectionError), deadline(DEADLINE):
        raise requests.ConnectionError("refused")


def test_a_dripped_websocket_handshake_ends_at_the_deadline():
    with dripping(head=WEBSOCKET_HEADERS_DRIPPED, scheme="ws") as server:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded), deadline(DEADLINE):
            websocket.create_connection(server.url, timeout=5, class_=DeadlineWebSocket)
        assert time.monotonic() - started < DEADLINE + SLACK
        server.wait_ended()
