"""``POST /sandbox/webhooks/test`` against the receiver docs/webhooks.md tells integrators to copy,
run for real: every event type the OpenAPI document's ``webhooks`` declare is sent, shaped as
the document says a real one is (objects closed, formats checked), marked ``test: true``, signed
with the merchant's secret so that the guide's receiver verifies it and answers as it would a
real one (approval callbacks with its decision)."""

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

from merchants.models import Merchant
from sandbox.services.testevents import CALLBACK_URL_TEST, EVENT_TYPES
from tests.factories import Actor, make_actor
from tests.test_openapi_docs import FORMATS, _strict
from tests.test_webhook_schemas import webhook_body_schema
from tests.withdrawals.conftest import envelope, ok_data

pytestmark = pytest.mark.django_db

GUIDE = settings.BASE_DIR / "docs" / "webhooks.md"
APPROVALS = {"trade.initiated", "crypto_withdrawal.awaiting_approval"}
WEBHOOK_OF = {
    "trade": "trade",
    "crypto_deposit": "cryptoDeposit",
    "crypto_withdrawal": "cryptoWithdrawal",
}
START_SECONDS = 20


def guide_receiver_code() -> str:
    """The receiver of docs/webhooks.md, "A receiver to copy", as the guide prints it."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    (code,) = [block for block in blocks if block.startswith('"""A webhook receiver')]
    return code


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def guide_receiver(tmp_path: Any, secret: str) -> Iterator[str]:
    """``python receiver.py`` with PORT and WEBHOOK_SECRET, as the guide says to run it."""
    script = tmp_path / "receiver.py"
    script.write_text(guide_receiver_code())
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(script)],
        env=os.environ | {"PORT": str(port), "WEBHOOK_SECRET": secret},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("the guide's receiver did not start") from None
                time.sleep(0.1)  # waiting for another process to listen, not for the clock
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def document(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        answer = APIClient().get("/openapi.json")
    assert answer.status_code == 200
    return answer.json()


@pytest.fixture
def alice(db: None) -> Actor:
    return make_actor(name="Alice")


@pytest.fixture
def bob(db: None) -> Actor:
    return make_actor(name="Bob")


def send(api: APIClient, actor: Actor, body: dict[str, Any]) -> Any:
    return api.post("/sandbox/webhooks/test", body, format="json", headers=actor.headers)


def assert_shaped_as_documented(document: dict[str, Any], payload: dict[str, Any]) -> None:
    name = (
        "callbackUrlTest"
        if payload == {"test": True}
        else WEBHOOK_OF[payload["type"].split(".")[0]]
    )
    schema = webhook_body_schema(document, name)
    validator = Draft202012Validator(
        {**_strict(schema), "components": _strict(document["components"])},
        format_checker=FORMATS,
    )
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(payload)]
    assert errors == [], (payload, errors)


def test_the_helper_sends_every_type_the_document_declares(document):
    declared = set()
    for name, webhook in document["webhooks"].items():
        body = webhook["post"]["requestBody"]["content"]["application/json"]["schema"]
        schema = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
        declared |= set(schema["properties"].get("type", {}).get("enum", []))
        if name == "callbackUrlTest":
            declared.add(CALLBACK_URL_TEST)
    accepted = document["components"]["schemas"]["SandboxWebhookTestInRequest"]
    accepted_types = set(accepted["properties"]["type"]["enum"])

    assert declared == set(EVENT_TYPES) == accepted_types
    assert len(declared) == 25


def test_the_guides_receiver_verifies_and_answers_every_test_event(api, alice, tmp_path, document):
    with guide_receiver(tmp_path, alice.merchant.webhook_secret) as url:
        sent = []
        for event_type in EVENT_TYPES:
            for trade_type in (
                ("withdraw", "deposit") if event_type.startswith("trade.") else (None,)
            ):
                body = {"type": event_type, "url": url}
                if trade_type:
                    body["tradeType"] = trade_type
                sent.append((event_type, trade_type, ok_data(send(api, alice, body))))

    answer_schema = Draft202012Validator(
        {**_strict(document["components"]["schemas"]["SandboxWebhookTestOut"]), "components": {}},
        format_checker=FORMATS,
    )
    for event_type, trade_type, data in sent:
        assert list(answer_schema.iter_errors(data)) == [], data
        assert (data["statusCode"], data["error"], data["url"]) == (200, None, url), data
        payload = data["payload"]
        assert_shaped_as_documented(document, payload)
        assert payload["test"] is True
        if event_type == CALLBACK_URL_TEST:
            assert data["webhookId"].startswith("test_")
            continue
        assert (payload["id"], payload["type"]) == (data["webhookId"], event_type)
        subject = payload.get("trade") or payload.get("deposit") or payload.get("withdrawal")
        assert subject["status"] == (
            "pending" if event_type == "trade.updated" else event_type.split(".")[1]
        )
        if trade_type:
            assert subject["type"] == trade_type
        # The guide's receiver decides approval callbacks (its limit is 500 USD): a deposit's
        # trade.initiated is informational, answered {}.
        approval = event_type in APPROVALS and trade_type != "deposit"
        assert envelope_answer(data) == ({"action": "approve"} if approval else {}), data


def envelope_answer(data: dict[str, Any]) -> Any:
    import json

    return json.loads(data["answer"])


def test_a_receiver_with_another_merchants_secret_refuses_the_event(api, alice, bob, tmp_path):
    with guide_receiver(tmp_path, alice.merchant.webhook_secret) as url:
        refused = ok_data(send(api, bob, {"type": "trade.completed", "url": url}))
        taken = ok_data(send(api, alice, {"type": "trade.completed", "url": url}))

    assert (refused["statusCode"], envelope_answer(refused)) == (401, {"error": "signature"})
    assert taken["statusCode"] == 200


def test_without_a_url_it_goes_to_the_callback_url(api, alice, bob, tmp_path):
    with guide_receiver(tmp_path, alice.merchant.webhook_secret) as url:
        Merchant.objects.filter(pk=alice.merchant.pk).update(callback_url=url)
        data = ok_data(send(api, alice, {"type": "crypto_withdrawal.awaiting_approval"}))
        refused = send(api, bob, {"type": "crypto_withdrawal.awaiting_approval"})

    assert (data["url"], data["statusCode"], envelope_answer(data)) == (
        url,
        200,
        {"action": "approve"},
    )
    # Bob has no callback URL: Alice's is not his.
    assert refused.status_code == 400
    assert envelope(refused)["error"]["key"] == "MERCHANT_NO_CALLBACK_URL"


def test_a_disabled_callback_url_is_no_target(api, alice):
    Merchant.objects.filter(pk=alice.merchant.pk).update(
        callback_url="http://127.0.0.1:9/", callback_disabled_at="2026-01-01T00:00:00Z"
    )

    refused = send(api, alice, {"type": "trade.completed"})

    assert envelope(refused)["error"]["key"] == "MERCHANT_NO_CALLBACK_URL"


def test_a_receiver_that_does_not_answer_is_reported_not_raised(api, alice):
    port = _free_port()  # nothing listens there

    data = ok_data(
        send(api, alice, {"type": "trade.completed", "url": f"http://127.0.0.1:{port}/"})
    )

    assert data["statusCode"] is None
    assert data["error"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "trade.shipped"}, "type"),
        ({}, "type"),
        ({"type": "crypto_deposit.completed", "tradeType": "deposit"}, "tradeType"),
        ({"type": "trade.completed", "url": "ftp://example.com/"}, "url"),
        ({"type": "trade.completed", "url": "http://x/" + "a" * 500}, "url"),
        ({"type": "trade.completed", "test": True}, "test"),
    ],
)
def test_refused_bodies(api, alice, body, field):
    refused = send(api, alice, body)

    assert refused.status_code == 400
    error = envelope(refused)["error"]
    assert error["key"] == "VALIDATION_FAILED"
    assert field in error["fields"]
