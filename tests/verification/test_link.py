"""POST /client/verification/link: another account of a verified person joins its identity."""

import pytest

from merchants.models import VerificationProcess, VerifiedIdentity
from tests.factories import assert_error
from tests.trading.helpers import ok

pytestmark = pytest.mark.django_db


@pytest.fixture
def ann(verifier, alice):
    """Alice's client 1, verified as ann@example.com."""
    person = verifier.person(alice, 1)
    verifier.verified(person, "ann@example.com")
    return person


def test_a_second_account_links_to_the_verified_identity(verifier, alice, ann):
    second = verifier.person(alice, 2)

    data = ok(verifier.link(second, {"email": "ann@example.com"}))

    identity = VerifiedIdentity.objects.get()
    assert data["verificationLevel"] == 3
    assert data["email"] == "ann@example.com"
    assert data["latestProcess"] is None  # linked, never checked itself
    assert data["linkedIdentity"]["identityId"] == str(identity.pk)
    assert data["linkedIdentity"]["linkedAt"].endswith("Z")
    assert second.client.identity == identity
    assert second.client.verification_level == 3
    assert set(identity.clients.values_list("platform_id", flat=True)) == {
        ann.client.platform_id,
        second.client.platform_id,
    }
    assert ok(verifier.status(second)) == data


def test_email_matches_case_insensitively(verifier, alice, ann):
    second = verifier.person(alice, 2)

    assert ok(verifier.link(second, {"email": " ANN@Example.com"}))["verificationLevel"] == 3


def test_linking_again_changes_nothing(verifier, alice, ann):
    second = verifier.person(alice, 2)
    first = ok(verifier.link(second, {"email": "ann@example.com"}))

    again = ok(verifier.link(second, {"email": "ann@example.com"}))

    assert again == first
    # The verified account itself links to its own identity as well.
    assert ok(verifier.link(ann, {"email": "ann@example.com"}))["verificationLevel"] == 3


def test_no_verified_identity_with_that_email(verifier, alice, ann):
    second = verifier.person(alice, 2)

    response = verifier.link(second, {"email": "bea@example.com"})

    assert_error(response, 404, 1310, "USER_NOT_FOUND")
    assert second.client.identity_id is None
    assert second.client.verification_level == 0


def test_a_pending_or_rejected_email_is_not_a_verified_identity(verifier, alice):
    pending, rejected = verifier.person(alice, 1), verifier.person(alice, 2)
    verifier.started(pending, "pat@example.com")
    dossier_id = verifier.started(rejected, "rex@example.com")["dossierId"]
    ok(verifier.decide(alice, dossier_id, "REJECTED"))
    third = verifier.person(alice, 3)

    for email in ("pat@example.com", "rex@example.com"):
        assert_error(verifier.link(third, {"email": email}), 404, 1310, "USER_NOT_FOUND")
    assert not VerifiedIdentity.objects.exists()


def test_another_merchants_identity_is_not_found(verifier, bob, ann):
    bobs_client = verifier.person(bob, 1)  # even the same platform id

    response = verifier.link(bobs_client, {"email": "ann@example.com"})

    assert_error(response, 404, 1310, "USER_NOT_FOUND")
    assert bobs_client.client.verification_level == 0


def test_an_account_of_another_identity_is_already_verified(verifier, alice, ann):
    bea = verifier.person(alice, 2)
    verifier.verified(bea, "bea@example.com")

    response = verifier.link(bea, {"email": "ann@example.com"})

    assert_error(response, 409, 3006, "VERIFICATION_ALREADY_VERIFIED")
    assert bea.client.identity.email == "bea@example.com"


def test_a_linked_account_cannot_start_a_verification(verifier, alice, ann):
    second = verifier.person(alice, 2)
    ok(verifier.link(second, {"email": "ann@example.com"}))

    assert_error(verifier.start(second), 409, 3006, "VERIFICATION_ALREADY_VERIFIED")


def test_an_identity_verified_without_email_cannot_be_linked_to(verifier, alice):
    verifier.verified(verifier.person(alice, 1))
    assert VerifiedIdentity.objects.get().email == ""
    second = verifier.person(alice, 2)

    assert_error(verifier.link(second, {"email": "x@example.com"}), 404, 1310, "USER_NOT_FOUND")


def test_linking_while_a_check_is_open_keeps_the_link_when_it_is_accepted(verifier, alice, ann):
    second = verifier.person(alice, 2)
    dossier_id = verifier.started(second, "other@example.com")["dossierId"]
    ok(verifier.link(second, {"email": "ann@example.com"}))

    ok(verifier.decide(alice, dossier_id, "ACCEPTED"))

    identity = ann.client.identity
    assert second.client.identity == identity
    assert VerificationProcess.objects.get(dossier_id=dossier_id).identity == identity
    assert VerifiedIdentity.objects.count() == 1


def test_a_second_accepted_dossier_with_the_same_email_joins_the_identity(verifier, alice, ann):
    second = verifier.person(alice, 2)

    verifier.verified(second, "Ann@example.com")

    assert VerifiedIdentity.objects.count() == 1
    assert second.client.identity == ann.client.identity


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "email"),
        ({"email": None}, "email"),
        ({"email": ""}, "email"),
        ({"email": "ann"}, "email"),
        ({"email": 1}, "email"),
        ({"email": "ann@example.com", "x": 1}, "x"),
    ],
)
def test_bad_bodies(verifier, alice, ann, body, field):
    second = verifier.person(alice, 2)

    error = assert_error(verifier.link(second, body), 400, 1001, "VALIDATION_FAILED")

    assert set(error["fields"]) == {field}
    assert second.client.identity_id is None
