"""LOG_FORMAT=json and SENTRY_DSN, each in a process of its own started with that setting (the
settings are read once per process): one JSON object per log line naming the request, merchant
and trade; an error reaching a Sentry server (a local one: the test's) tagged with the request
id, through the Django and Celery integrations."""

import gzip
import json
import os
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings

from tests.faults.database import database_url

pytestmark = pytest.mark.django_db(transaction=True)

# Runs in a child process: a buy through the API (its approval callback refused, so the trade
# moves and logs nothing) and a request whose view raises, then prints the log's JSON lines.
CHILD = r"""
import logging, sys
import django
django.setup()
from unittest import mock
from django.test import Client
import sentry_sdk

from config.health import HealthApi
from core.context import context_trade_set, end_request, start_request
from tests.factories import make_actor

actor = make_actor(name="Logged")
client = Client(raise_request_exception=False)
# A known merchant and trade on one log line of a task-like unit of work.
start_request("task-1")
context_trade_set("trade-1", actor.merchant.pk)
logging.getLogger("trading.test").warning("moved %s", "on")
end_request()
answered = client.get("/v1/wallets/me/balance", headers={"api-key": actor.api_key})
assert answered.status_code == 200, answered.content
with mock.patch.object(HealthApi, "get", side_effect=RuntimeError("boom-sentinel")):
    failed = client.get("/health", headers={"X-Request-Id": "req-sentry-1"})
assert failed.status_code == 500, failed.content
print("MERCHANT", actor.merchant.pk, flush=True)
print("ANSWERED", answered["X-Request-Id"], flush=True)
client_ = sentry_sdk.get_client()
print("SENTRY", client_.is_active(), sorted(client_.integrations), flush=True)
sentry_sdk.flush(timeout=10)
"""


def run_child(**env_changes: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": settings.SECRET_KEY,
        "SANDBOX": "true",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "INFO",
        **env_changes,
    }
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-c", CHILD],  # warnings are not log lines
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def answered_id(child: subprocess.CompletedProcess[str]) -> str:
    return child.stdout.split("ANSWERED ")[1].split()[0]


def test_json_logs_name_the_request_the_merchant_and_the_trade():
    child = run_child(LOG_FORMAT="json", SENTRY_DSN="")
    assert child.returncode == 0, child.stderr
    merchant = child.stdout.split("MERCHANT ")[1].split()[0]
    lines = [json.loads(line) for line in child.stderr.splitlines() if line.startswith("{")]
    assert len(lines) == len(child.stderr.splitlines()), child.stderr  # every line is JSON
    moved = next(line for line in lines if line["message"] == "moved on")
    assert moved["requestId"] == "task-1"
    assert moved["tradeId"] == "trade-1"
    assert moved["merchantId"] == merchant
    assert moved["level"] == "WARNING"
    assert moved["logger"] == "trading.test"
    failed = next(line for line in lines if line["message"] == "unhandled error")
    assert failed["requestId"] == "req-sentry-1"
    assert "RuntimeError: boom-sentinel" in failed["exception"]
    assert "tradeId" not in failed  # a new request starts with nothing known
    assert "SENTRY False" in child.stdout
    (access,) = [line for line in lines if line["logger"] == "access" and line["status"] == 200]
    assert access["route"] == access["path"].removeprefix("/") == "v1/wallets/me/balance"
    assert access["method"] == "GET"
    assert access["merchantId"] == merchant
    assert access["requestId"] == answered_id(child)
    (unhandled,) = [line for line in lines if line["logger"] == "access" and line["status"] == 500]
    assert unhandled["requestId"] == "req-sentry-1"
    assert unhandled["route"] == "health"


def test_a_text_log_format_stays_the_default_and_a_wrong_one_is_refused():
    child = run_child(LOG_FORMAT="", SENTRY_DSN="")
    assert child.returncode == 0, child.stderr
    assert "WARNING trading.test requestId=task-1 moved on" in child.stderr
    access = f"INFO access requestId={answered_id(child)} GET /v1/wallets/me/balance 200 "
    assert access in child.stderr
    refused = run_child(LOG_FORMAT="xml")
    assert refused.returncode != 0
    assert "LOG_FORMAT must be line or json" in refused.stderr


class SentryServer:
    """Sentry's envelope endpoint as the SDK posts to it (``/api/<project>/envelope/``)."""

    def __init__(self) -> None:
        self.envelopes: list[tuple[str, bytes]] = []
        received = self.envelopes

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                received.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sentry_server() -> Iterator[SentryServer]:
    server = SentryServer()
    yield server
    server.stop()


def test_an_error_reaches_sentry_tagged_with_its_request_id(sentry_server: SentryServer):
    dsn = f"http://publickey@127.0.0.1:{sentry_server.port}/42"
    child = run_child(SENTRY_DSN=dsn, SENTRY_ENVIRONMENT="test")
    assert child.returncode == 0, child.stderr
    assert "SENTRY True" in child.stdout
    assert "'celery'" in child.stdout
    assert "'django'" in child.stdout
    events = []
    for path, body in sentry_server.envelopes:
        assert path == "/api/42/envelope/"
        for line in body.splitlines():
            if line.startswith(b"{") and b'"exception"' in line:
                events.append(json.loads(line))
    (event,) = [e for e in events if "boom-sentinel" in json.dumps(e["exception"])]
    assert event["tags"]["requestId"] == "req-sentry-1"
    assert event["environment"] == "test"
    assert event["release"].startswith("trading-service@")
