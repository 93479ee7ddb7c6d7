"""POST /client/verification/start: the dossier, its errors, the 30-minute rule."""

import types
from urllib.parse import urlsplit

import pytest

from merchants import ratelimits
from merchants.models import Client
from merchants.verification.models import VerificationProcess
from sandbox.models import SandboxDossier
from tests.factories import assert_error, make_actor
from tests.trading.helpers import ok
from tests.verification.conftest import START

pytestmark = pytest.mark.django_db

THIRTY_MINUTES = 30 * 60


def test_start_opens_a_dossier_with_a_capture_url(verifier, alice):
    person = verifier.person(alice)

    data = verifier.started(person, "Ann.Smith@Example.COM")

    assert set(data) == {"captureUrl", "dossierId", "sdkToken"}
    url = urlsplit(data["captureUrl"])
    assert url.scheme == "https"
    assert str(url.hostname).endswith(".invalid")
    process = VerificationProcess.objects.get(dossier_id=data["dossierId"])
    assert process.client == person.client
    assert process.merchant == alice.merchant
    assert process.status == VerificationProcess.Status.PENDING
    assert process.email == "ann.smith@example.com"
    assert process.completed_at is None
    # The provider has the dossier too, undecided.
    dossier = SandboxDossier.objects.get(pk=data["dossierId"])
    assert dossier.verdict == SandboxDossier.Verdict.PENDING
    assert dossier.session in data["captureUrl"]
    assert data["sdkToken"] == f"sandbox-sdk-{dossier.session}"


@pytest.mark.parametrize("body", [{}, {"email": None}])
def test_email_is_optional(verifier, alice, body):
    person = verifier.person(alice)

    data = ok(verifier.start(person, body))

    assert VerificationProcess.objects.get(dossier_id=data["dossierId"]).email == ""


def test_each_dossier_is_new(verifier, alice):
    first, second = verifier.person(alice, 1), verifier.person(alice, 2)

    ids = {verifier.started(first)["dossierId"], verifier.started(second)["dossierId"]}

    assert len(ids) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not-an-email"}, "email"),
        ({"email": " ann@example.com"}, "email"),  # as sent: spaces are not part of an address
        ({"email": 42}, "email"),
        ({"email": ["a@example.com"]}, "email"),
        ({"email": "a" * 250 + "@x.com"}, "email"),
        ({"email": "a@example.com", "name": "Ann"}, "name"),
        ([], "body"),
    ],
)
def test_bad_bodies_are_refused_with_nothing_written(verifier, alice, body, field):
    person = verifier.person(alice)

    error = assert_error(verifier.start(person, body), 400, 1001, "VALIDATION_FAILED")

    assert set(error["fields"]) == {field}
    assert not VerificationProcess.objects.exists()
    assert not SandboxDossier.objects.exists()


def test_already_verified_is_refused(verifier, alice):
    person = verifier.person(alice)
    verifier.verified(person)

    assert_error(verifier.start(person), 409, 3006, "VERIFICATION_ALREADY_VERIFIED")
    assert VerificationProcess.objects.count() == 1


def test_a_merchant_kyc_level_3_is_not_the_services_verification(verifier, alice):
    person = verifier.person(alice, kycLevel=3)

    assert ok(verifier.start(person))["dossierId"]


def test_in_progress_within_30_minutes(verifier, alice, clock_advance):
    person = verifier.person(alice)
    first = verifier.started(person)

    assert_error(verifier.start(person), 409, 3007, "VERIFICATION_IN_PROGRESS")
    clock_advance(THIRTY_MINUTES - 1)
    assert_error(verifier.start(person), 409, 3007, "VERIFICATION_IN_PROGRESS")
    assert VerificationProcess.objects.count() == 1
    assert first["dossierId"] == VerificationProcess.objects.get().dossier_id


def test_after_30_minutes_a_new_start_expires_the_open_one(verifier, alice, clock_advance):
    person = verifier.person(alice)
    first = verifier.started(person)
    clock_advance(THIRTY_MINUTES)

    second = verifier.started(person)

    assert second["dossierId"] != first["dossierId"]
    old = VerificationProcess.objects.get(dossier_id=first["dossierId"])
    assert old.status == VerificationProcess.Status.EXPIRED
    assert old.completed_at is not None
    assert old.next_check_at is None
    new = VerificationProcess.objects.get(dossier_id=second["dossierId"])
    assert new.status == VerificationProcess.Status.PENDING
    # The expired dossier's verdict comes too late: the process is closed.
    assert_error(
        verifier.decide(alice, first["dossierId"], "ACCEPTED"), 409, 3002, "INVALID_TRANSITION"
    )
    assert person.client.verification_level == 0


def test_a_rejected_process_does_not_block_a_new_start(verifier, alice):
    person = verifier.person(alice)
    first = verifier.started(person)
    ok(verifier.decide(alice, first["dossierId"], "REJECTED"))

    second = verifier.started(person)

    assert second["dossierId"] != first["dossierId"]
    statuses = set(VerificationProcess.objects.values_list("status", flat=True))
    assert statuses == {"REJECTED", "PENDING"}


def test_another_clients_open_process_does_not_block(verifier, alice, bob):
    verifier.started(verifier.person(alice, 1))

    assert ok(verifier.start(verifier.person(alice, 2)))
    assert ok(verifier.start(verifier.person(bob, 1)))  # same platform id, other merchant


def test_provider_outage_is_503_and_writes_nothing(verifier, alice):
    person = verifier.person(alice)
    verifier.provider(alice, "offline")

    response = verifier.start(person, {"email": "ann@example.com"})

    assert_error(response, 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert response["Retry-After"] == "60"
    assert not VerificationProcess.objects.exists()
    assert not SandboxDossier.objects.exists()
    verifier.provider(alice, "online")
    assert ok(verifier.start(person))["dossierId"]


def test_without_a_token(api, alice):
    assert_error(api.post(START, {}, format="json"), 401, 1108, "MISSING_BEARER")
    response = api.post(START, {}, format="json", headers={"Authorization": "Bearer nope"})
    assert_error(response, 401, 1102, "INVALID_TOKEN")
    # A merchant key is not a client token.
    response = api.post(START, {}, format="json", headers=alice.headers)
    assert_error(response, 401, 1108, "MISSING_BEARER")
    assert not VerificationProcess.objects.exists()


def test_a_token_whose_client_row_is_gone_is_invalid(verifier, alice):
    person = verifier.person(alice)
    Client.objects.filter(pk=person.client.pk).delete()

    assert_error(verifier.start(person), 401, 1102, "INVALID_TOKEN")
    assert not VerificationProcess.objects.exists()


def test_rate_limited_per_merchant(verifier, monkeypatch):
    actor = make_actor(name="Unverified", is_verified=False)
    window = (int(ratelimits.time.time()) // 60) * 60 + 30.0  # mid-minute: no roll-over
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: window))
    people = [verifier.person(actor, partner) for partner in range(1, 7)]

    for n, person in enumerate(people[:5], start=1):
        response = verifier.start(person)
        assert response.status_code == 200, response.content
        assert response["X-RateLimit-Limit"] == "5"
        assert response["X-RateLimit-Remaining"] == str(5 - n)

    response = verifier.start(people[5])
    assert_error(response, 429, 1005, "RATE_LIMITED")
    assert int(response["Retry-After"]) >= 1
    assert VerificationProcess.objects.count() == 5
