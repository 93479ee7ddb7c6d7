"""One Sumsub account serves every merchant: a webhook moves the one dossier it names, never
another merchant's client, even one with the same platform id."""

import pytest

from merchants.verification.models import VerificationProcess
from tests.trading.helpers import ok
from tests.verification.sumsub.conftest import notify

pytestmark = pytest.mark.django_db


def _level_and_status(verifier, person) -> tuple[int, str]:
    data = ok(verifier.status(person))
    return data["verificationLevel"], data["latestProcess"]["status"]


def test_two_merchants_clients_are_decided_apart(api, verifier, alice, bob, sumsub):
    ann, ben = verifier.person(alice, 1), verifier.person(bob, 1)  # the same platform id
    ann_dossier = verifier.started(ann, "same@example.com")["dossierId"]
    ben_dossier = verifier.started(ben, "same@example.com")["dossierId"]
    assert ann_dossier != ben_dossier

    sumsub.review(ann_dossier, "GREEN")
    ok(notify(api, sumsub.webhook(ann_dossier)))

    assert _level_and_status(verifier, ann) == (3, "ACCEPTED")
    assert _level_and_status(verifier, ben) == (0, "PENDING")

    sumsub.review(ben_dossier, "RED", "FINAL")
    ok(notify(api, sumsub.webhook(ben_dossier)))

    assert _level_and_status(verifier, ann) == (3, "ACCEPTED")
    assert _level_and_status(verifier, ben) == (0, "REJECTED")
    # Each identity stays its merchant's: the same email made two.
    assert ann.client.identity.merchant == alice.merchant
    assert ben.client.identity is None


def test_a_webhook_whose_reference_is_another_process_is_ignored(api, verifier, alice, bob, sumsub):
    """The applicant id and the externalUserId must name the same process: a mismatch moves
    neither."""
    ann, ben = verifier.person(alice), verifier.person(bob)
    ann_dossier = verifier.started(ann)["dossierId"]
    verifier.started(ben)
    ben_process = VerificationProcess.objects.get(client=ben.client)
    sumsub.review(ann_dossier, "GREEN")

    ok(notify(api, sumsub.webhook(ann_dossier, externalUserId=str(ben_process.pk))))

    assert _level_and_status(verifier, ann) == (0, "PENDING")
    assert _level_and_status(verifier, ben) == (0, "PENDING")
