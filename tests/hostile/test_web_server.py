"""The real web server under hostile requests: a body nested 100,000 deep is refused without
killing a worker; what gunicorn will not read (a request line or headers over its limits, or
malformed) is answered with the API's envelope, not gunicorn's HTML page; and every command that
starts gunicorn takes its settings from config/gunicorn.py."""

import http.client
import json
import re
import socket
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from tests.factories import make_actor
from tests.faults.processes import web_server
from tests.hostile.battery import DEEP_ARRAY, DEEP_OBJECT, Attack
from tests.hostile.server import Server
from tests.hostile.wire import health_problem, refusal_problem, send

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CONFIG = "-c config/gunicorn.py"


@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT], ids=["arrays", "objects"])
def test_a_body_nested_100000_deep_is_refused_and_every_worker_lives(server: Server, body):
    actor = make_actor(name="Deep")
    token = server.client_token(actor.api_key)
    workers = server.workers()

    for path, credentials in (
        ("/secure/buy", {"api-key": actor.api_key}),
        ("/client/trading/deposit", {"Authorization": f"Bearer {token}"}),
    ):
        answer = send(server.port, Attack("deep", "POST", path, body), credentials)
        assert refusal_problem(answer, "VALIDATION_FAILED") is None, answer
        assert json.loads(answer.body)["error"]["fields"] == {
            "body": "Arrays and objects nest deeper than 32 levels."
        }
    assert server.workers() == workers


def raw_exchange(port: int, request: bytes) -> tuple[http.client.HTTPResponse, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response, json.loads(response.read())


@pytest.mark.parametrize(
    ("request_head", "field"),
    [
        (b"GET /secure/trades?x=" + b"a" * 9_000 + b" HTTP/1.1\r\n", "url"),
        (b"GET /secure/trades/a\x00b HTTP/1.1\r\n", "url"),
        (b"GET /secure/trades HTTP/1.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n", "headers"),
        (b"GET /secure/trades HTTP/1.1\r\n" + b"X-Many: a\r\n" * 150, "headers"),
        (b"GET /secure/trades HTTP/1.1\r\nX-Nul: a\x00b\r\n", "headers"),
        (b"GET /secure/trades HTTP/1.1\r\nX Space: a\r\n", "headers"),
        (b"GET /secure/trades HTTP/3.0\r\n", "httpVersion"),
        (b"GET /secure/trades HTTP/2.0\r\n", "httpVersion"),
        (b"GET /secure/trades HTTPS/1.1\r\n", "httpVersion"),
        (b"GET /secure/tr ades HTTP/1.1\r\n", "httpVersion"),
        (b"G@T /secure/trades HTTP/1.1\r\n", "method"),
        (b"get /secure/trades HTTP/1.1\r\n", "method"),
        (b"GET /secure/trades HTTP/1.1\r\nX-A: a\r\n  folded\r\n", "headers"),
        (
            b"GET /secure/trades HTTP/1.1\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Ssl: on\r\n",
            "headers",
        ),
    ],
    ids=[
        "long-url",
        "nul-in-url",
        "big-header",
        "many-headers",
        "nul-in-header",
        "bad-name",
        "http-3",
        "http-2",
        "https-version",
        "space-in-path",
        "bad-method",
        "lower-case-method",
        "obs-fold",
        "forwarded-proto-and-ssl-disagree",
    ],
)
def test_what_gunicorn_refuses_is_answered_with_the_envelope(server: Server, request_head, field):
    response, body = raw_exchange(server.port, request_head + b"Host: x\r\n\r\n")

    assert response.status == 400
    assert response.getheader("Content-Type") == "application/json"
    assert response.getheader("Connection") == "close"
    request_id = response.getheader("X-Request-Id")
    assert str(uuid.UUID(request_id, version=4)) == request_id == body["requestId"]
    assert body["success"] is False
    assert body["error"]["code"] == 1001
    assert body["error"]["key"] == "VALIDATION_FAILED"
    assert list(body["error"]["fields"]) == [field]
    assert health_problem(server.port) is None


def test_every_command_that_starts_gunicorn_takes_the_config_file(tmp_path: Path) -> None:
    root = Path(settings.BASE_DIR)
    commands = [
        line
        for text in ((root / "bin" / "start").read_text(), (root / "README.md").read_text())
        for line in text.splitlines()
        if re.search(r"\bgunicorn\b.*config\.wsgi:application", line)
    ]
    argv = " ".join(web_server({}, 1, tmp_path / "log").argv)

    assert len(commands) == 2
    assert all(CONFIG in command for command in commands), commands
    assert f"-c {root / 'config' / 'gunicorn.py'}" in argv
    assert not re.search(r"--(workers|threads|limit-request|worker-class)", " ".join(commands))


@pytest.mark.parametrize(
    ("head", "body", "field"),
    [
        (b"Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n", "body"),
        (b"Transfer-Encoding: gzip, chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n", "body"),
        (b"Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n", "body"),
        (b"Transfer-Encoding: chunked\r\n", b"2;\x01=x\r\n{}\r\n0\r\n\r\n", "body"),
        (b"Transfer-Encoding: chunked\r\n", b"2\r\n{}XX0\r\n\r\n", "body"),
    ],
    ids=["chunked", "gzip-chunked", "bad-chunk-size", "bad-chunk-extension", "missing-terminator"],
)
def test_a_body_in_a_transfer_coding_is_answered_with_the_envelope(
    server: Server, head, body, field
):
    """gunicorn parses a chunked body only as the application reads it, and Django reads a body
    by its Content-Length only: it would have read this one as empty ("items is required")."""
    actor = make_actor(name="Chunked")
    request = (
        b"POST /secure/buy HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"api-key: {actor.api_key}\r\n".encode()
        + head
        + b"\r\n"
        + body
    )
    response, answer = raw_exchange(server.port, request)

    assert response.status == 400, answer
    assert answer["error"]["key"] == "VALIDATION_FAILED"
    assert list(answer["error"]["fields"]) == [field]
    assert health_problem(server.port) is None
