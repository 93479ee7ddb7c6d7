"""The TypeScript webhook verifier of docs/assetpay-sdk.md, run by node against this service's
own signatures: test events of every type signed and posted by ``POST /sandbox/webhooks/test``
(the signing and posting every delivery goes through) to a node server built on it, both
signatures of a secret rotation, and the refusals the ``standardwebhooks`` library makes too.

Node 20 runs no TypeScript. The verifier's only TypeScript is the type annotations of its
signature, so the test erases those; ``node --check`` refuses whatever else the doc may gain."""

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from core import clock
from sandbox.services.testevents import EVENT_TYPES
from tests.factories import Actor, make_actor
from tests.sandbox.test_webhook_test_events import _free_port, send
from tests.webhooks.conftest import webhook_secret
from tests.withdrawals.conftest import ok_data
from tests.withdrawals.receiver import Received, receiver

pytestmark = pytest.mark.django_db

GUIDE = settings.BASE_DIR / "docs" / "assetpay-sdk.md"
START_SECONDS = 20
NODE_SECONDS = 30

# A node server on the doc's verifier: 200 with what it verified (from the raw bytes and from
# the same body as a string), 401 with the verifier's message.
RECEIVER = """
import { createServer } from "node:http";
import { verifyWebhook } from "./verifier.mjs";

createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const raw = Buffer.concat(chunks);
    let status = 200;
    let answer;
    try {
      const fromBytes = verifyWebhook(process.env.WEBHOOK_SECRET, raw, request.headers);
      const fromText = verifyWebhook(process.env.WEBHOOK_SECRET, raw.toString(), request.headers);
      answer = { id: fromBytes.id ?? null, type: fromBytes.type ?? null, test: fromBytes.test,
                 same: JSON.stringify(fromBytes) === JSON.stringify(fromText) };
    } catch (error) {
      status = 401;
      answer = { error: error.message };
    }
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(answer));
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
"""

# The verifier on given cases ([secret, base64 body, headers] from stdin): "ok" or its message.
CASES = """
import { readFileSync } from "node:fs";
import { verifyWebhook } from "./verifier.mjs";

const cases = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map(([secret, body, headers]) => {
  try {
    verifyWebhook(secret, Buffer.from(body, "base64"), headers);
    return "ok";
  } catch (error) {
    return error.message;
  }
})));
"""


def verifier_typescript() -> str:
    """The guide's TypeScript block that defines ``verifyWebhook``, as printed."""
    blocks = re.findall(r"```ts\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    (code,) = [block for block in blocks if "export function verifyWebhook(" in block]
    return code


def _top_level(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += (char in "<([{") - (char in ">)]}")
        if char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    return [*parts, text[start:]]


def _parameter(typed: str) -> str:
    """``name: Type = default`` as ``name = default``."""
    declared, *default = _top_level(typed, "=")
    name = _top_level(declared, ":")[0].strip()
    return f"{name} = {default[0].strip()}" if default else name


def javascript(typescript: str) -> str:
    """The verifier with its signature's annotations (parameters, return type) erased."""
    head, found, rest = typescript.partition("export function verifyWebhook(")
    assert found
    depth, end = 1, 0
    while depth:
        depth += (rest[end] == "(") - (rest[end] == ")")
        end += 1
    parameters = re.sub(r"//[^\n]*", "", rest[: end - 1])
    returns, _, body = rest[end:].partition("{")
    assert re.fullmatch(r"\s*:\s*[\w<>\[\]|, ]+\s*", returns), returns
    erased = [_parameter(p) for p in _top_level(parameters, ",") if p.strip()]
    return f"{head}{found}{', '.join(erased)}) {{{body}"


@pytest.fixture
def node(tmp_path: Path) -> Path:
    """A folder holding the verifier as an ES module, checked by node."""
    binary = shutil.which("node")
    assert binary, "node is needed (CI installs npm packages with it)"
    (tmp_path / "verifier.mjs").write_text(javascript(verifier_typescript()))
    (tmp_path / "receiver.mjs").write_text(RECEIVER)
    (tmp_path / "cases.mjs").write_text(CASES)
    for script in ("verifier.mjs", "receiver.mjs", "cases.mjs"):
        checked = subprocess.run(
            [binary, "--check", script], cwd=tmp_path, capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stderr
    return tmp_path


@contextmanager
def node_receiver(folder: Path, secret: str) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        ["node", "receiver.mjs"],
        cwd=folder,
        env=os.environ | {"PORT": str(port), "WEBHOOK_SECRET": secret},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(START_SECONDS * 10):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, process.communicate()[0]
                _pause(process)
        else:
            raise AssertionError("the node receiver did not start")
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _pause(process: subprocess.Popen[bytes]) -> None:
    """Wait a tenth of a second for another process to listen (not for the service's clock)."""
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)


def verdicts(folder: Path, cases: list[tuple[str, bytes, dict[str, str]]]) -> list[str]:
    encoded = [[secret, base64.b64encode(body).decode(), head] for secret, body, head in cases]
    run = subprocess.run(
        ["node", "cases.mjs"],
        cwd=folder,
        input=json.dumps(encoded),
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
    )
    assert run.returncode == 0, run.stderr
    answer: list[str] = json.loads(run.stdout)
    return answer


def library_verdict(secret: str, body: bytes, headers: dict[str, str]) -> str:
    try:
        Webhook(secret).verify(body, headers)
    except WebhookVerificationError:
        return "refused"
    return "ok"


def signature(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, whatever ``timestamp`` says."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def captured(api: Any, actor: Actor, event_type: str) -> Received:
    """One test event of ``actor``'s, as a receiver gets it (headers in lower case)."""
    with receiver() as hooks:
        ok_data(send(api, actor, {"type": event_type, "url": hooks.url}))
    (delivery,) = hooks.received
    return delivery


def test_the_verifier_takes_every_event_type_this_service_signs(api, alice, bob, node):
    with node_receiver(node, alice.merchant.webhook_secret) as url:
        answers = {
            event_type: ok_data(send(api, alice, {"type": event_type, "url": url}))
            for event_type in EVENT_TYPES
        }
        foreign = ok_data(send(api, bob, {"type": "trade.initiated", "url": url}))

    for event_type, data in answers.items():
        assert (data["statusCode"], data["error"]) == (200, None), data
        verified = json.loads(data["answer"])
        assert verified == {
            "id": data["payload"].get("id"),
            "type": data["payload"].get("type"),
            "test": True,
            "same": True,
        }, event_type
    # Bob's event, signed with Bob's secret, does not verify with Alice's.
    assert (foreign["statusCode"], json.loads(foreign["answer"])) == (
        401,
        {"error": "signature does not verify"},
    )


def test_during_a_rotation_either_secret_verifies(api, node):
    old = webhook_secret()
    rotating = make_actor(
        name="Rotating",
        previous_webhook_secret=old,
        previous_webhook_secret_expires_at=clock.now() + timedelta(hours=1),
    )
    new = rotating.merchant.webhook_secret
    delivery = captured(api, rotating, "trade.completed")
    assert len(delivery.headers["webhook-signature"].split(" ")) == 2

    cases = [(secret, delivery.body, delivery.headers) for secret in (new, old, webhook_secret())]
    assert verdicts(node, cases) == ["ok", "ok", "signature does not verify"]
    assert [library_verdict(*case) for case in cases] == ["ok", "ok", "refused"]


def test_what_the_verifier_refuses_the_library_refuses(api, alice, node):
    secret = alice.merchant.webhook_secret
    delivery = captured(api, alice, "crypto_withdrawal.awaiting_approval")
    headers = delivery.headers
    changed = delivery.body.replace(b'"test":true', b'"test":false')
    assert changed != delivery.body
    ten_minutes_ago = clock.now() - timedelta(minutes=10)
    old_headers = headers | {
        "webhook-timestamp": str(int(ten_minutes_ago.timestamp())),
        "webhook-signature": Webhook(secret).sign(
            headers["webhook-id"], ten_minutes_ago, delivery.body.decode()
        ),
    }
    unsigned = {k: v for k, v in headers.items() if k != "webhook-signature"}
    # Signed, and within the tolerance, but not written as the specification writes it.
    decimal = f"{headers['webhook-timestamp']}.0"
    decimal_headers = headers | {
        "webhook-timestamp": decimal,
        "webhook-signature": signature(secret, headers["webhook-id"], decimal, delivery.body),
    }
    cases = [
        (secret, delivery.body, headers),
        (secret, changed, headers),
        (secret, delivery.body, old_headers),
        (secret, delivery.body, unsigned),
        (secret, delivery.body, decimal_headers),
    ]

    assert verdicts(node, cases) == [
        "ok",
        "signature does not verify",
        "timestamp too far from now",
        "not a signed webhook",
        "timestamp too far from now",
    ]
    assert [library_verdict(*case) for case in cases] == ["ok"] + ["refused"] * 4


def test_the_type_eraser_keeps_defaults_and_drops_annotations():
    typescript = (
        'import { x } from "y";\n'
        "export function verifyWebhook(\n"
        "  a: string, // note: with a colon\n"
        "  b: Record<string, string | string[] | undefined>,\n"
        "  c = 300,\n"
        "): unknown {\n  return a;\n}\n"
    )

    assert javascript(typescript) == (
        'import { x } from "y";\nexport function verifyWebhook(a, b, c = 300) {\n  return a;\n}\n'
    )
