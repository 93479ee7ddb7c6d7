"""Every endpoint an outside provider calls, under hostile headers sent byte for byte to the real
server (gunicorn as deployed, the provider configured): raw bytes that are not UTF-8, UTF-8 text,
a header given twice, values over the application's and over gunicorn's limits, in each header
the route or the middleware on its path reads. Each answer is a 4xx of the catalog (a genuine
notification carrying a hostile header it does not need may be taken), no worker dies, and
nothing is recorded half: a notification is taken whole or not at all.

The provider endpoints are found in the URL configuration: the routes that take a POST without
credentials. Today that is Sumsub's webhooks; a new one fails the first test until it is swept
here with its provider's signature."""

import hashlib
import hmac
import http.client
import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from django.urls import get_resolver

from merchants.verification.models import IdentityNotification
from tests.hostile.operations import _routes
from tests.hostile.server import Server, serving
from tests.hostile.wire import TIMEOUT_SECONDS, Answer, health_problem, refusal_problem

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

NOTIFICATIONS = "/verification/provider-notifications"
WEBHOOK_SECRET = "whk-hostile-headers"
SUMSUB_ENV = {
    "IDENTITY_PROVIDER": "merchants.verification.sumsub.SumsubIdentityProvider",
    "SUMSUB_BASE_URL": "http://127.0.0.1:9",  # never called: notifications only
    "SUMSUB_APP_TOKEN": "app-token",
    "SUMSUB_SECRET_KEY": "secret-key",
    "SUMSUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
    "SUMSUB_LEVEL_NAME": "basic-kyc",
}
SIGNATURE = (b"X-Payload-Digest", b"X-Payload-Digest-Alg")
# What every request carries besides its signature (Content-Length: the body's).
BASE = {b"Host": b"127.0.0.1", b"Content-Type": b"application/json", b"Content-Length": None}
# Read by the route or by the middleware on its path (not an API prefix: sessions, CSRF and the
# admin's user run there), with a plausible value for when the attack is to give one twice.
OTHERS = {
    **BASE,
    b"Cookie": b"sessionid=abc; csrftoken=def",
    b"Accept": b"application/json",
    b"Authorization": b"Bearer probe",
    b"Origin": b"https://example.com",
    b"Referer": b"https://example.com/",
    b"X-Request-Id": str(uuid.uuid4()).encode(),
    b"X-Forwarded-For": b"203.0.113.7",
}
OVER_SERVER_LIMIT = "over gunicorn's line limit"
HOSTILE = {
    "UTF-8 text": "é€日本 ✓".encode(),
    "bytes that are not UTF-8": bytes(range(0x80, 0x100)),
    "huge": b"f" * 8_000,
    OVER_SERVER_LIMIT: b"f" * 20_000,
}
DUPLICATED = "given twice"


def unauthenticated_posts() -> set[str]:
    return {
        path
        for path, view_class in _routes(get_resolver().url_patterns, "/")
        if hasattr(view_class, "post") and getattr(view_class, "authentication_classes", None) == []
    }


def test_the_provider_endpoints_are_every_route_taking_a_post_without_credentials() -> None:
    assert unauthenticated_posts() == {NOTIFICATIONS}


@pytest.fixture(scope="module")
def sumsub_server(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("provider") / "web.log", **SUMSUB_ENV) as up:
        yield up


def _notification(*, secret: str) -> tuple[bytes, dict[bytes, bytes | None]]:
    """A Sumsub webhook about an applicant no dossier has (taken and ignored when genuine),
    each one different, and its headers."""
    made = datetime.now(UTC)
    body = (
        b'{"type":"applicantPending","applicantId":"%s","externalUserId":"%s",'
        b'"createdAtMs":"%s"}'
        % (
            uuid.uuid4().hex[:24].encode(),
            str(uuid.uuid4()).encode(),
            made.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3].encode(),
        )
    )
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode()
    headers = {b"X-Payload-Digest": digest, b"X-Payload-Digest-Alg": b"HMAC_SHA256_HEX"}
    return body, BASE | headers


def _attacks(name: bytes, plausible: bytes) -> Iterator[tuple[str, list[bytes]]]:
    """(kind, header lines) for each hostile form of ``name``."""
    for kind, value in HOSTILE.items():
        yield kind, [name + b": " + value]
    yield DUPLICATED, [name + b": " + plausible] * 2


def _send(port: int, body: bytes, headers: dict[bytes, bytes | None], lines: list[bytes]) -> Answer:
    replaced = {line.split(b":", 1)[0] for line in lines}
    head = [
        name + b": " + (value if value is not None else str(len(body)).encode())
        for name, value in headers.items()
        if name not in replaced
    ]
    request = (
        f"POST {NOTIFICATIONS} HTTP/1.1\r\n".encode()
        + b"".join(line + b"\r\n" for line in (*head, *lines, b"Connection: close"))
        + b"\r\n"
        + body
    )
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_SECONDS) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        return Answer(response.status, answer_headers, response.read())


def _taken(body: bytes) -> int:
    return IdentityNotification.objects.filter(digest=hashlib.sha256(body).hexdigest()).count()


def _problem(
    server: Server, name: bytes, kind: str, *, genuine: bool, required: str | None
) -> str | None:
    body, headers = _notification(secret=WEBHOOK_SECRET if genuine else "not-the-secret")
    plausible = headers.get(name) or OTHERS.get(name) or str(len(body)).encode()
    lines = dict(_attacks(name, plausible))[kind]
    where = f"{name.decode()} {kind} ({'genuine' if genuine else 'attacker'})"
    try:
        answer = _send(server.port, body, headers, lines)
    except OSError as exc:
        return f"{where}: no answer: {exc!r}"
    if genuine and answer.status == 200:
        return None if _taken(body) == 1 else f"{where}: 200 but taken {_taken(body)} times"
    problem = refusal_problem(answer, required)
    if problem is None and _taken(body):
        problem = f"refused ({answer.status}) but recorded"
    unhealthy = health_problem(server.port)
    if problem is None and unhealthy:
        problem = f"/health did not answer 200 after it: {unhealthy}"
    return f"{where}: {problem}" if problem else None


def test_hostile_headers_are_refused_in_the_envelope_and_nothing_is_half_taken(
    sumsub_server: Server,
) -> None:
    workers = sumsub_server.workers()
    kinds = [*HOSTILE, DUPLICATED]
    failures: list[str] = []
    sent = 0
    for name in (*SIGNATURE, *OTHERS):
        for kind in kinds:
            for genuine in (True, False):
                # A hostile signature header is a bad signature, genuine body or not.
                refused_as = (
                    "PROVIDER_SIGNATURE_INVALID"
                    if name in SIGNATURE and kind != OVER_SERVER_LIMIT
                    else None
                )
                sent += 1
                problem = _problem(sumsub_server, name, kind, genuine=genuine, required=refused_as)
                if problem:
                    failures.append(problem)
    if sumsub_server.workers() != workers:
        failures.append(f"a worker was replaced:\n{sumsub_server.process.log_tail()}")
    assert sent == (len(SIGNATURE) + len(OTHERS)) * len(kinds) * 2
    assert not failures, f"{len(failures)} of {sent} requests failed:\n" + "\n".join(failures)


def test_the_genuine_notification_is_taken_through_the_real_server(sumsub_server: Server) -> None:
    """The sweep's control: the same request without an attack is taken, once."""
    body, headers = _notification(secret=WEBHOOK_SECRET)

    answer = _send(sumsub_server.port, body, headers, [])

    assert answer.status == 200, answer
    assert _taken(body) == 1
