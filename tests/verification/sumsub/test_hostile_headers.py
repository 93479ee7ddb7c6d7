"""Hostile headers on Sumsub's webhook route, through Django's test client: values a WSGI server
hands on as text (any bytes, decoded as latin-1: UTF-8 text, binary, control characters) and
huge ones, in every header the route or the middleware on its path reads. The signature's
headers refuse them as a bad signature (401 PROVIDER_SIGNATURE_INVALID); in any other header
an attacker's request is a 4xx of the catalog and a genuine notification is either taken whole
or not at all. Never a 500, never anything half written. Duplicated headers and raw bytes need a
real server: tests/hostile/test_provider_headers.py."""

import pytest

from core.errors import CATALOG
from merchants.verification.models import IdentityNotification, VerificationProcess
from tests.factories import assert_error
from tests.verification.sumsub.conftest import notify

pytestmark = pytest.mark.django_db

# What a WSGI server gives the application for bytes it read: latin-1 text of any bytes.
HOSTILE = {
    "UTF-8 text": "é€日本 ✓".encode().decode("latin-1"),
    "binary": bytes(range(0x80, 0x100)).decode("latin-1"),
    "control characters": "a\x01\x1b\x7fb",
    "huge": "f" * 8_000,  # one header line gunicorn reads; the application's limit is 16 KiB
}
SIGNATURE = ("X-Payload-Digest", "X-Payload-Digest-Alg")
# Read by the route (the raw body's type and length) or by the middleware on its path, which is
# not an API prefix: sessions, CSRF and the admin's user read cookies, Origin and Referer.
OTHERS = (
    "Content-Type",
    "Content-Length",
    "Cookie",
    "Accept",
    "Authorization",
    "Origin",
    "Referer",
    "X-Request-Id",
    "X-Forwarded-For",
)


@pytest.fixture
def pending(verifier, alice, sumsub):
    """Alice's client with a Sumsub applicant reviewed GREEN, not yet notified."""
    person = verifier.person(alice)
    applicant_id = verifier.started(person, "ann@example.com")["dossierId"]
    sumsub.review(applicant_id, "GREEN")
    return applicant_id


def _nothing_taken() -> None:
    assert not IdentityNotification.objects.exists()
    assert VerificationProcess.objects.get().status == VerificationProcess.Status.PENDING


def _catalog_4xx(response) -> None:
    assert 400 <= response.status_code < 500, response.content
    key = response.json()["error"]["key"]
    assert_error(response, CATALOG[key].status, CATALOG[key].code, key)


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("name", SIGNATURE)
def test_a_hostile_signature_header_is_a_bad_signature(api, sumsub, pending, name, kind):
    body, headers = sumsub.webhook(pending)

    response = notify(api, (body, headers | {name: HOSTILE[kind]}))

    assert_error(response, 401, 3012, "PROVIDER_SIGNATURE_INVALID")
    _nothing_taken()


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("name", OTHERS)
def test_an_attackers_hostile_header_is_refused_in_the_envelope(api, sumsub, pending, name, kind):
    """Without the webhook secret, whatever else the request carries."""
    body, headers = sumsub.webhook(pending, secret="not-the-webhook-secret")

    _catalog_4xx(notify(api, (body, headers | {name: HOSTILE[kind]})))

    _nothing_taken()


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("name", OTHERS)
def test_a_genuine_notification_with_a_hostile_header_is_taken_whole_or_not_at_all(
    api, sumsub, pending, name, kind
):
    body, headers = sumsub.webhook(pending)

    response = notify(api, (body, headers | {name: HOSTILE[kind]}))

    if response.status_code == 200:
        assert IdentityNotification.objects.count() == 1
        assert VerificationProcess.objects.get().status == VerificationProcess.Status.ACCEPTED
    else:
        _catalog_4xx(response)
        _nothing_taken()


def test_a_digest_that_is_hex_of_the_right_length_but_wrong_is_refused(api, sumsub, pending):
    body, headers = sumsub.webhook(pending)
    digest = headers["X-Payload-Digest"]
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]

    assert_error(
        notify(api, (body, headers | {"X-Payload-Digest": wrong})),
        401,
        3012,
        "PROVIDER_SIGNATURE_INVALID",
    )
    _nothing_taken()
