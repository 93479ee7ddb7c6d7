"""A worker thread keeps its connection to a receiver open between posts, and nothing else
travels from one post to the next: no cookie, no unread part of an earlier answer."""

from collections.abc import Iterator

import pytest

from merchants.webhooks.egress import MAX_ANSWER_BYTES, callback_post
from tests.withdrawals.receiver import Receiver, receiver

HEADERS = {"Content-Type": "application/json"}


@pytest.fixture
def keep_alive() -> Iterator[Receiver]:
    with receiver(keep_alive=True) as endpoint:
        yield endpoint


def post(endpoint: Receiver, body: bytes = b"{}") -> bytes:
    answer = callback_post(endpoint.url, body=body, headers=HEADERS, timeout=5)
    assert answer.status_code == 200
    return answer.body


def test_posts_to_one_receiver_share_a_connection(keep_alive):
    post(keep_alive, b'{"n":1}')
    post(keep_alive, b'{"n":2}')
    post(keep_alive, b'{"n":3}')

    assert [r.json["n"] for r in keep_alive.received] == [1, 2, 3]
    assert len({r.client_port for r in keep_alive.received}) == 1


def test_a_receiver_that_closes_each_connection_gets_every_post():
    with receiver() as closing:
        post(closing)
        post(closing)

    assert len({r.client_port for r in closing.received}) == 2


def test_a_cookie_one_answer_sets_is_not_sent_back(keep_alive):
    keep_alive.answer_headers = {"Set-Cookie": "session=from-the-receiver; Path=/"}
    post(keep_alive)
    post(keep_alive)

    first, second = keep_alive.received
    assert first.client_port == second.client_port
    assert "cookie" not in second.headers


def test_an_answer_left_partly_unread_does_not_reach_the_next_post(keep_alive):
    keep_alive.answer = lambda got: (200, b"x" * (MAX_ANSWER_BYTES * 2) if got.json else b"ok")

    assert post(keep_alive, b'{"big":1}') == b"x" * MAX_ANSWER_BYTES
    assert post(keep_alive, b"{}") == b"ok"
    assert len({r.client_port for r in keep_alive.received}) == 2
