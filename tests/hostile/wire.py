"""Requests sent byte for byte as written (no client library re-encoding the URL or the body),
and what a refusal must look like."""

import contextlib
import http.client
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from core.errors import CATALOG
from tests.hostile.battery import Attack

TIMEOUT_SECONDS = 30.0
HEALTH_DEADLINE_SECONDS = 10.0


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes


def send(port: int, attack: Attack, credentials: dict[str, str]) -> Answer:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_SECONDS)
    try:
        connection.putrequest(attack.method, attack.target, skip_accept_encoding=True)
        for name, value in (*credentials.items(), *attack.headers):
            connection.putheader(name, value)
        if attack.body is not None:
            connection.putheader("Content-Type", "application/json")
        if attack.body is not None or attack.method != "GET":
            connection.putheader("Content-Length", str(len(attack.body or b"")))
        # The server may answer a body it refuses (too large) before reading it, and close: the
        # answer is already on its way, and is read as curl would read it.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.endheaders(attack.body)
        response = connection.getresponse()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return Answer(response.status, headers, response.read())
    finally:
        connection.close()


def health(port: int) -> str:
    """``/health``'s status and body, or why it did not answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_SECONDS)
    try:
        connection.request("GET", "/health")
        response = connection.getresponse()
        return f"{response.status} {response.read()[:300]!r}"
    except OSError as exc:
        return repr(exc)
    finally:
        connection.close()


def healthy(port: int) -> bool:
    return health(port).startswith("200 ")


def health_problem(port: int) -> str | None:
    """None once ``/health`` answers 200 (within a few seconds: a check of a dependency may time
    out on a busy machine), else its last answer."""
    give_up = time.monotonic() + HEALTH_DEADLINE_SECONDS
    while not (answer := health(port)).startswith("200 "):
        if time.monotonic() > give_up:
            return answer
        time.sleep(0.1)
    return None


def refusal_problem(answer: Answer, required_key: str | None) -> str | None:
    """What is wrong with ``answer`` as a 4xx error envelope of the catalog (with
    ``required_key``, when given), or None."""
    shown = f"{answer.status} {answer.body[:300]!r}"
    if not 400 <= answer.status < 500:
        return f"not a 4xx: {shown}"
    if answer.headers.get("content-type") != "application/json":
        return f"not JSON: {answer.headers.get('content-type')} {shown}"
    try:
        body: Any = json.loads(answer.body)
        error = body["error"]
        spec = CATALOG[error["key"]]
    except (ValueError, KeyError, TypeError):
        return f"not an error envelope of the catalog: {shown}"
    if body["success"] is not False or set(body) != {"requestId", "success", "error"}:
        return f"not an error envelope: {shown}"
    if (error["code"], answer.status) != (spec.code, spec.status):
        return f"code or status not those of {spec.key} in the catalog: {shown}"
    if not _is_uuid4(body["requestId"]) or answer.headers.get("x-request-id") != body["requestId"]:
        return f"no requestId matching X-Request-Id: {shown}"
    if required_key is not None and error["key"] != required_key:
        return f"{error['key']} instead of {required_key}: {shown}"
    return None


def _is_uuid4(value: object) -> bool:
    try:
        return str(uuid.UUID(str(value), version=4)) == value
    except ValueError:
        return False
