"""POST /client/verification/link: another account of a verified person joins its identity, when
the merchant's latest kycHash says both accounts are one person (decisions section 6)."""

import pytest

from merchants.verification.models import VerificationProcess, VerifiedIdentity
from tests.factories import assert_error
from tests.trading.helpers import ok

pytestmark = pytest.mark.django_db

ANN = "sha256:ann"  # the merchant's kycHash of the person behind ann@example.com


@pytest.fixture
def ann(verifier, alice):
    """Alice's client 1, verified as ann@example.com, with alice's kycHash of that person."""
    person = verifier.person(alice, 1, kycHash=ANN)
    verifier.verified(person, "ann@example.com")
    return person


def test_a_second_account_links_to_the_verified_identity(verifier, alice, ann):
    second = verifier.person(alice, 2, kycHash=ANN)

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
    second = verifier.person(alice, 2, kycHash=ANN)

    assert ok(verifier.link(second, {"email": "ANN@Example.com"}))["verificationLevel"] == 3


def test_linking_again_changes_nothing(verifier, alice, ann):
    second = verifier.person(alice, 2, kycHash=ANN)
    first = ok(verifier.link(second, {"email": "ann@example.com"}))

    again = ok(verifier.link(second, {"email": "ann@example.com"}))

    assert again == first
    # The verified account itself links to its own identity as well.
    assert ok(verifier.link(ann, {"email": "ann@example.com"}))["verificationLevel"] == 3


def test_no_verified_identity_with_that_email(verifier, alice, ann):
    second = verifier.person(alice, 2, kycHash=ANN)

    response = verifier.link(second, {"email": "bea@example.com"})

    assert_error(response, 403, 3011, "VERIFICATION_LINK_DENIED")
    assert second.client.identity_id is None
    assert second.client.verification_level == 0


def test_a_pending_or_rejected_email_is_not_a_verified_identity(verifier, alice):
    pending, rejected = verifier.person(alice, 1), verifier.person(alice, 2)
    verifier.started(pending, "pat@example.com")
    dossier_id = verifier.started(rejected, "rex@example.com")["dossierId"]
    ok(verifier.decide(alice, dossier_id, "REJECTED"))
    third = verifier.person(alice, 3)

    for email in ("pat@example.com", "rex@example.com"):
        assert_error(verifier.link(third, {"email": email}), 403, 3011, "VERIFICATION_LINK_DENIED")
    assert not VerifiedIdentity.objects.exists()


def test_another_merchants_identity_is_not_linked(verifier, bob, ann):
    bobs_client = verifier.person(bob, 1, kycHash=ANN)  # even the same platform id and kycHash

    response = verifier.link(bobs_client, {"email": "ann@example.com"})

    assert_error(response, 403, 3011, "VERIFICATION_LINK_DENIED")
    assert bobs_client.client.verification_level == 0


def test_an_account_of_another_identity_is_already_verified(verifier, alice, ann):
    bea = verifier.person(alice, 2)
    verifier.verified(bea, "bea@example.com")

    response = verifier.link(bea, {"email": "ann@example.com"})

    assert_error(response, 409, 3006, "VERIFICATION_ALREADY_VERIFIED")
    assert bea.client.identity.email == "bea@example.com"


def test_a_linked_account_cannot_start_a_verification(verifier, alice, ann):
    second = verifier.person(alice, 2, kycHash=ANN)
    ok(verifier.link(second, {"email": "ann@example.com"}))

    assert_error(verifier.start(second), 409, 3006, "VERIFICATION_ALREADY_VERIFIED")


def test_an_identity_verified_without_email_cannot_be_linked_to(verifier, alice):
    verifier.verified(verifier.person(alice, 1, kycHash=ANN))
    assert VerifiedIdentity.objects.get().email == ""
    second = verifier.person(alice, 2, kycHash=ANN)

    assert_error(
        verifier.link(second, {"email": "x@example.com"}), 403, 3011, "VERIFICATION_LINK_DENIED"
    )


def test_linking_while_a_check_is_open_keeps_the_link_when_it_is_accepted(verifier, alice, ann):
    second = verifier.person(alice, 2, kycHash=ANN)
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


def assert_denied(verifier, person, identity_accounts: set[str]) -> None:
    """403 VERIFICATION_LINK_DENIED, and nothing changed."""
    response = verifier.link(person, {"email": "ann@example.com"})

    assert_error(response, 403, 3011, "VERIFICATION_LINK_DENIED")
    client = person.client
    assert (client.identity_id, client.identity_linked_at, client.verification_level) == (
        None,
        None,
        0,
    )
    identity = VerifiedIdentity.objects.get(merchant=person.actor.merchant)
    assert set(identity.clients.values_list("platform_id", flat=True)) == identity_accounts
    assert ok(verifier.status(person))["linkedIdentity"] is None


def test_an_email_alone_links_nothing(verifier, alice, ann):
    """The attack: a client token and a verified person's email, nothing else."""
    stranger = verifier.person(alice, 2)

    assert_denied(verifier, stranger, {ann.client.platform_id})


def test_another_persons_kyc_hash_is_denied(verifier, alice, ann):
    stranger = verifier.person(alice, 2, kycHash="sha256:someone-else")

    assert_denied(verifier, stranger, {ann.client.platform_id})


@pytest.mark.parametrize(
    ("verified_hash", "linking_hash"),
    [(None, ANN), (ANN, None), (None, None)],
    ids=["verified-account-without", "linking-account-without", "both-without"],
)
def test_a_missing_kyc_hash_on_either_side_is_denied(verifier, alice, verified_hash, linking_hash):
    first = verifier.person(alice, 1, kycHash=verified_hash)
    verifier.verified(first, "ann@example.com")
    second = verifier.person(alice, 2, kycHash=linking_hash)

    assert_denied(verifier, second, {first.client.platform_id})


def test_the_latest_kyc_hash_counts(verifier, alice, ann):
    second = verifier.person(alice, 2, kycHash=ANN)
    verifier.person(alice, 2)  # the merchant authenticates the account again, without kycHash

    assert_denied(verifier, second, {ann.client.platform_id})

    second = verifier.person(alice, 2, kycHash=ANN)
    verifier.person(alice, 1, kycHash="sha256:ann-renamed")  # and ann's with another one

    assert_denied(verifier, second, {ann.client.platform_id})


def test_any_account_of_the_identity_with_the_kyc_hash_vouches(verifier, alice, ann):
    ok(verifier.link(verifier.person(alice, 2, kycHash=ANN), {"email": "ann@example.com"}))
    verifier.person(alice, 1, kycHash="sha256:ann-renamed")
    third = verifier.person(alice, 3, kycHash=ANN)

    assert ok(verifier.link(third, {"email": "ann@example.com"}))["verificationLevel"] == 3


def test_another_merchants_kyc_hashes_never_count(verifier, alice, bob, ann):
    """Bob verified his own ann@example.com under his own kycHash of her. A bob account with
    alice's kycHash of ann cannot join bob's identity; an alice account with bob's kycHash
    cannot join alice's."""
    bobs_ann = verifier.person(bob, 1, kycHash="sha256:bobs-ann")
    verifier.verified(bobs_ann, "ann@example.com")
    bobs_stranger = verifier.person(bob, 2, kycHash=ANN)
    alices_stranger = verifier.person(alice, 2, kycHash="sha256:bobs-ann")

    assert_denied(verifier, bobs_stranger, {bobs_ann.client.platform_id})
    assert_denied(verifier, alices_stranger, {ann.client.platform_id})

    alices_second = verifier.person(alice, 3, kycHash=ANN)
    ok(verifier.link(alices_second, {"email": "ann@example.com"}))
    assert alices_second.client.identity == ann.client.identity
    assert bobs_ann.client.identity.clients.count() == 1


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


def test_an_unknown_email_and_a_wrong_kyc_hash_answer_alike(verifier, alice, ann):
    """No oracle: a client cannot tell a verified email from an unknown one."""
    guesser = verifier.person(alice, 2, kycHash="someone-else")

    known = verifier.link(guesser, {"email": "ann@example.com"}).json()["error"]
    unknown = verifier.link(guesser, {"email": "nobody@example.com"}).json()["error"]

    assert known == unknown
    assert known["key"] == "VERIFICATION_LINK_DENIED"


def test_an_account_of_another_identity_is_already_verified_whatever_the_email(
    verifier, alice, ann
):
    bea = verifier.person(alice, 2)
    verifier.verified(bea, "bea@example.com")

    response = verifier.link(bea, {"email": "nobody@example.com"})

    assert_error(response, 409, 3006, "VERIFICATION_ALREADY_VERIFIED")
