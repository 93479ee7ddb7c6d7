"""The receiver docs/webhooks.md gives integrators to copy, run as written (the code block taken
from the page) against the service's real deliveries: it approves a withdrawal under its limit,
rejects one above it, refuses a forged signature, and processes a re-sent event once."""

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from standardwebhooks.webhooks import Webhook

from tests.factories import make_actor, trade_url
from tests.faults.processes import free_port
from tests.withdrawals.conftest import Desk, funded, make_listing, money, ok_data
from trading.models import Trade

pytestmark = pytest.mark.django_db

PAGE = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def receiver_source() -> str:
    page = PAGE.read_text()
    section = page[page.index("## A receiver to copy") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "docs/webhooks.md has no receiver to copy"
    return match.group(1)


class Running:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def printed(self) -> list[str]:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return out.splitlines()


@pytest.fixture
def alice(db: None):
    return make_actor(name="Alice")


@pytest.fixture
def docs_receiver(tmp_path: Path, alice) -> Iterator[Running]:
    script = tmp_path / "receiver.py"
    script.write_text(receiver_source())
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "WEBHOOK_SECRET": alice.merchant.webhook_secret,
        "PYTHONUNBUFFERED": "1",
    }
    process = subprocess.Popen(
        [sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            requests.post(url, data=b"{}", timeout=1)
            break
        except requests.ConnectionError:
            time.sleep(0.05)
    running = Running(process, url)
    yield running
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    return Desk(api, django_capture_on_commit_callbacks)


def buy(desk: Desk, actor, item, price: str) -> dict:
    listing = make_listing(item, price)
    body = {
        "tradeUrl": trade_url(5),
        "items": [{"itemId": listing.id, "price": Decimal(price) * Decimal("1.05")}],
        "slippageBps": 1000,
    }
    return ok_data(desk.post("/secure/buy", body, headers=actor.headers))


def test_the_docs_receiver_approves_under_its_limit_and_rejects_above(
    desk, alice, catalog_item, docs_receiver
):
    funded(alice, "2000.00", docs_receiver.url)

    small = buy(desk, alice, catalog_item, "100.00")
    large = buy(desk, alice, catalog_item, "600.00")

    assert Trade.objects.get(pk=small["id"]).status != "failed"
    rejected = Trade.objects.get(pk=large["id"])
    assert rejected.status == "failed"
    assert money(alice)["locked"] == Trade.objects.get(pk=small["id"]).total_price
    printed = docs_receiver.printed()
    assert any(line.startswith(f"trade.initiated {small['id']}") for line in printed)


def headers_signed(secret: str, msg_id: str, body: bytes) -> dict[str, str]:
    sent_at = datetime.now(UTC)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, sent_at, body.decode()),
        "Content-Type": "application/json",
    }


def test_the_docs_receiver_refuses_a_forged_signature_and_processes_a_resend_once(
    alice, docs_receiver
):
    body = b'{"type":"trade.completed","sequence":3,"trade":{"id":"t-1","status":"completed"}}'
    signed = headers_signed(alice.merchant.webhook_secret, "msg_1", body)
    forged = headers_signed("whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB", "msg_2", body)

    first = requests.post(docs_receiver.url, data=body, headers=signed, timeout=5)
    again = requests.post(docs_receiver.url, data=body, headers=signed, timeout=5)
    refused = requests.post(docs_receiver.url, data=body, headers=forged, timeout=5)

    assert (first.status_code, again.status_code, refused.status_code) == (200, 200, 401)
    assert docs_receiver.printed().count("trade.completed t-1 completed") == 1
