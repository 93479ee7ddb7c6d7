"""POST /sandbox/verification/{dossierId} (the provider's verdict), POST
/sandbox/verification-provider (its outage), and both gone when SANDBOX is off."""

import importlib
from collections.abc import Iterator

import pytest
from django.test import override_settings
from django.urls import clear_url_caches

from merchants.verification.models import VerificationProcess, VerifiedIdentity
from sandbox.models import SandboxDossier
from tests.factories import assert_error
from tests.trading.helpers import ok
from tests.verification.conftest import PROVIDER, decide_path

pytestmark = pytest.mark.django_db


def test_accepted_verifies_the_client(verifier, alice):
    person = verifier.person(alice)
    started = verifier.started(person, "ann@example.com")

    data = ok(verifier.decide(alice, started["dossierId"], "ACCEPTED"))

    assert data["dossierId"] == started["dossierId"]
    assert data["status"] == "ACCEPTED"
    assert data["completedAt"] is not None
    client = person.client
    assert client.verification_level == 3
    identity = VerifiedIdentity.objects.get()
    assert client.identity == identity
    assert (identity.merchant, identity.email, identity.level) == (
        alice.merchant,
        "ann@example.com",
        3,
    )
    assert SandboxDossier.objects.get(pk=started["dossierId"]).verdict == "ACCEPTED"


def test_rejected_ends_the_process(verifier, alice):
    person = verifier.person(alice)
    started = verifier.started(person, "ann@example.com")

    data = ok(verifier.decide(alice, started["dossierId"], "REJECTED"))

    assert data["status"] == "REJECTED"
    process = VerificationProcess.objects.get()
    assert process.next_check_at is None
    assert person.client.verification_level == 0
    assert not VerifiedIdentity.objects.exists()


@pytest.mark.parametrize("first", ["ACCEPTED", "REJECTED"])
@pytest.mark.parametrize("second", ["ACCEPTED", "REJECTED"])
def test_a_decided_dossier_cannot_be_decided_again(verifier, alice, first, second):
    person = verifier.person(alice)
    started = verifier.started(person)
    ok(verifier.decide(alice, started["dossierId"], first))

    response = verifier.decide(alice, started["dossierId"], second)

    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    assert VerificationProcess.objects.get().status == first
    assert person.client.verification_level == (3 if first == "ACCEPTED" else 0)


def test_unknown_dossier(verifier, alice):
    assert_error(verifier.decide(alice, "dsr_nope", "ACCEPTED"), 404, 1002, "NOT_FOUND")


def test_another_merchant_cannot_see_or_decide_a_dossier(verifier, alice, bob):
    person = verifier.person(alice)
    started = verifier.started(person)

    response = verifier.decide(bob, started["dossierId"], "ACCEPTED")

    assert_error(response, 404, 1002, "NOT_FOUND")
    assert VerificationProcess.objects.get().status == "PENDING"
    assert SandboxDossier.objects.get().verdict == "PENDING"
    assert person.client.verification_level == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"status": "accepted"}, "status"),
        ({"status": "PENDING"}, "status"),
        ({"status": None}, "status"),
        ({}, "status"),
        ({"status": "ACCEPTED", "reason": "x"}, "reason"),
    ],
)
def test_bad_bodies(api, verifier, alice, body, field):
    started = verifier.started(verifier.person(alice))

    response = api.post(
        decide_path(started["dossierId"]), body, format="json", headers=alice.headers
    )

    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == {field}
    assert VerificationProcess.objects.get().status == "PENDING"


def test_needs_an_api_key(api, verifier, alice):
    person = verifier.person(alice)
    started = verifier.started(person)

    response = api.post(
        decide_path(started["dossierId"]),
        {"status": "ACCEPTED"},
        format="json",
        headers=person.headers,
    )

    assert_error(response, 401, 1900, "MISSING_API_KEY")
    assert VerificationProcess.objects.get().status == "PENDING"


@pytest.mark.parametrize("status", ["up", "down", "", None, True])
def test_provider_helper_validates(api, alice, status):
    response = api.post(PROVIDER, {"status": status}, format="json", headers=alice.headers)

    assert set(assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]) == {"status"}


def test_a_verdict_given_while_the_provider_is_down_arrives_later(verifier, alice, clock_advance):
    """The provider decides, but the service cannot fetch the verdict: the process stays
    pending and the verdict sweep applies it once the provider answers again."""
    from merchants.verification.tasks import sweep_verifications

    person = verifier.person(alice)
    started = verifier.started(person)
    verifier.provider(alice, "offline")

    data = ok(verifier.decide(alice, started["dossierId"], "ACCEPTED"))

    assert data["status"] == "PENDING"
    assert person.client.verification_level == 0
    # The provider has decided: a second verdict is refused.
    assert_error(
        verifier.decide(alice, started["dossierId"], "REJECTED"), 409, 3002, "INVALID_TRANSITION"
    )
    verifier.provider(alice, "online")
    clock_advance(60)
    sweep_verifications.apply()
    assert VerificationProcess.objects.get().status == "ACCEPTED"
    assert person.client.verification_level == 3


def test_the_provider_is_down_only_for_the_merchant_that_took_it_down(verifier, alice, bob):
    """Decisions section 8: bob's outage switch is bob's world; alice's clients still verify."""
    bobs_waiting = verifier.started(verifier.person(bob, 1))["dossierId"]

    verifier.provider(bob, "offline")

    ann = verifier.person(alice, 1)
    assert (
        ok(verifier.decide(alice, verifier.started(ann)["dossierId"], "ACCEPTED"))
        == ok(verifier.status(ann))["latestProcess"]
    )
    assert ann.client.verification_level == 3
    bea = verifier.person(bob, 2)
    assert_error(verifier.start(bea), 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert ok(verifier.decide(bob, bobs_waiting, "ACCEPTED"))["status"] == "PENDING"

    verifier.provider(alice, "offline")
    verifier.provider(alice, "online")  # alice's switch does not bring bob's provider back

    assert_error(verifier.start(bea), 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    verifier.provider(bob, "online")
    assert verifier.started(bea)["dossierId"]


def _reload_urls() -> None:
    import config.urls

    importlib.reload(config.urls)
    clear_url_caches()


@pytest.fixture
def sandbox_off() -> Iterator[None]:
    try:
        with override_settings(SANDBOX=False):
            _reload_urls()
            yield
    finally:
        _reload_urls()


def test_helpers_do_not_exist_outside_the_sandbox(api, verifier, alice, sandbox_off):
    person = verifier.person(alice)
    started = verifier.started(person)

    for path, body in (
        (decide_path(started["dossierId"]), {"status": "ACCEPTED"}),
        (PROVIDER, {"status": "offline"}),
    ):
        response = api.post(path, body, format="json", headers=alice.headers)
        assert_error(response, 404, 1002, "NOT_FOUND")
    assert VerificationProcess.objects.get().status == "PENDING"
    assert ok(verifier.status(person))["latestProcess"]["status"] == "PENDING"
