"""GET /client/verification/status: the shapes before, during and after a verification."""

import pytest

from merchants.models import Client
from merchants.verification.models import VerificationProcess
from tests.factories import assert_error
from tests.trading.helpers import ok
from tests.verification.conftest import STATUS

pytestmark = pytest.mark.django_db


def test_nothing_yet(verifier, alice):
    person = verifier.person(alice)

    assert ok(verifier.status(person)) == {
        "verificationLevel": 0,
        "email": None,
        "latestProcess": None,
        "linkedIdentity": None,
    }


def test_pending_after_start(verifier, alice):
    person = verifier.person(alice)
    started = verifier.started(person, "ann@example.com")

    data = ok(verifier.status(person))

    assert data["verificationLevel"] == 0
    assert data["email"] == "ann@example.com"
    assert data["linkedIdentity"] is None
    process = data["latestProcess"]
    assert set(process) == {"dossierId", "status", "startedAt", "completedAt"}
    assert process["dossierId"] == started["dossierId"]
    assert process["status"] == "PENDING"
    assert process["startedAt"].endswith("Z")
    assert process["completedAt"] is None


def test_reading_the_status_does_not_fetch_the_verdict(verifier, alice):
    """The provider decided, but nothing told the service yet: the status says what it knows."""
    from merchants.verification.base import Verdict
    from sandbox.identity import sandbox_dossier_decide

    person = verifier.person(alice)
    started = verifier.started(person)
    assert sandbox_dossier_decide(dossier_id=started["dossierId"], verdict=Verdict.ACCEPTED)

    assert ok(verifier.status(person))["latestProcess"]["status"] == "PENDING"
    assert ok(verifier.status(person))["verificationLevel"] == 0


def test_verified(verifier, alice):
    person = verifier.person(alice)
    started = verifier.started(person, "ann@example.com")
    ok(verifier.decide(alice, started["dossierId"], "ACCEPTED"))

    data = ok(verifier.status(person))

    client = person.client
    assert data["verificationLevel"] == 3
    assert data["email"] == "ann@example.com"
    assert data["latestProcess"]["status"] == "ACCEPTED"
    assert data["latestProcess"]["completedAt"].endswith("Z")
    assert data["linkedIdentity"]["identityId"] == str(client.identity_id)
    assert data["linkedIdentity"]["linkedAt"].endswith("Z")
    process = VerificationProcess.objects.get(dossier_id=started["dossierId"])
    assert process.identity_id == client.identity_id


def test_rejected(verifier, alice):
    person = verifier.person(alice)
    started = verifier.started(person, "ann@example.com")
    ok(verifier.decide(alice, started["dossierId"], "REJECTED"))

    data = ok(verifier.status(person))

    assert data["verificationLevel"] == 0
    assert data["latestProcess"]["status"] == "REJECTED"
    assert data["latestProcess"]["completedAt"] is not None
    assert data["linkedIdentity"] is None
    assert person.client.identity_id is None


def test_latest_process_is_the_newest(verifier, alice):
    person = verifier.person(alice)
    first = verifier.started(person)
    ok(verifier.decide(alice, first["dossierId"], "REJECTED"))
    second = verifier.started(person, "ann@example.com")

    data = ok(verifier.status(person))

    assert data["latestProcess"]["dossierId"] == second["dossierId"]
    assert data["latestProcess"]["status"] == "PENDING"


def test_a_client_sees_only_its_own(verifier, alice, bob):
    ann = verifier.person(alice, 1)
    verifier.verified(ann, "ann@example.com")
    other_account = verifier.person(alice, 2)
    same_id_other_merchant = verifier.person(bob, 1)

    for person in (other_account, same_id_other_merchant):
        assert ok(verifier.status(person)) == {
            "verificationLevel": 0,
            "email": None,
            "latestProcess": None,
            "linkedIdentity": None,
        }


def test_without_a_token(api, alice, verifier):
    assert_error(api.get(STATUS), 401, 1108, "MISSING_BEARER")
    assert_error(api.get(STATUS, headers={"Authorization": "x"}), 401, 1102, "INVALID_TOKEN")
    person = verifier.person(alice)
    Client.objects.filter(pk=person.client.pk).delete()
    assert_error(verifier.status(person), 401, 1102, "INVALID_TOKEN")


def test_status_has_its_own_read_budget(verifier, alice):
    response = verifier.status(verifier.person(alice))

    assert response.status_code == 200
    assert response["X-RateLimit-Limit"] == "3000"  # GET /client/trades' line (verified)
