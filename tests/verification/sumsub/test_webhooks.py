"""Sumsub's signed webhooks at POST /verification/provider-notifications: the verdict moves the
dossier and the client's level; a bad digest, a replay, an old or malformed one are refused with
the catalog's errors and change nothing; one merchant's dossier never moves another's."""

import hashlib
import hmac
from datetime import timedelta

import pytest

from core import clock
from merchants.verification.models import IdentityNotification, VerificationProcess
from merchants.verification.tasks import prune_identity_notifications
from tests.factories import assert_error
from tests.trading.helpers import ok
from tests.verification.sumsub.conftest import NOTIFICATIONS, WEBHOOK_SECRET, notify, use_sumsub

pytestmark = pytest.mark.django_db


@pytest.fixture
def started(verifier, alice, sumsub):
    """Alice's client with a Sumsub applicant waiting for its review."""
    person = verifier.person(alice)
    data = verifier.started(person, "ann@example.com")
    return person, data["dossierId"]


def _status(verifier, person) -> tuple[int, str]:
    data = ok(verifier.status(person))
    return data["verificationLevel"], data["latestProcess"]["status"]


def test_green_verifies_the_client(api, verifier, sumsub, started):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")

    assert ok(notify(api, sumsub.webhook(applicant_id))) == {"received": True}

    assert _status(verifier, person) == (3, "ACCEPTED")
    data = ok(verifier.status(person))
    assert data["linkedIdentity"] is not None
    assert data["email"] == "ann@example.com"
    assert person.client.verification_level == 3
    assert_error(verifier.start(person), 409, 3006, "VERIFICATION_ALREADY_VERIFIED")


def test_red_final_rejects_and_a_new_start_is_allowed_at_once(api, verifier, sumsub, started):
    person, applicant_id = started
    sumsub.review(applicant_id, "RED", "FINAL")

    ok(notify(api, sumsub.webhook(applicant_id)))

    assert _status(verifier, person) == (0, "REJECTED")
    assert VerificationProcess.objects.get().completed_at is not None
    again = verifier.started(person)
    assert again["dossierId"] != applicant_id
    # Sumsub's later change of mind about the closed dossier changes nothing.
    sumsub.review(applicant_id, "GREEN")
    ok(notify(api, sumsub.webhook(applicant_id)))
    assert VerificationProcess.objects.get(dossier_id=applicant_id).status == "REJECTED"
    assert person.client.verification_level == 0


def test_red_retry_waits_for_the_resubmission_and_its_review(api, verifier, sumsub, started):
    person, applicant_id = started
    sumsub.review(applicant_id, "RED", "RETRY")

    ok(notify(api, sumsub.webhook(applicant_id)))

    assert _status(verifier, person) == (0, "PENDING")
    assert_error(verifier.start(person), 409, 3007, "VERIFICATION_IN_PROGRESS")
    # The person sends a better selfie through the same WebSDK session.
    sumsub.resubmit(applicant_id)
    ok(notify(api, sumsub.webhook(applicant_id, "applicantPending")))
    assert _status(verifier, person) == (0, "PENDING")
    sumsub.review(applicant_id, "GREEN")
    ok(notify(api, sumsub.webhook(applicant_id)))
    assert _status(verifier, person) == (3, "ACCEPTED")


@pytest.mark.parametrize("kind", ["applicantCreated", "applicantPending", "applicantReset"])
def test_events_without_a_verdict_change_nothing(api, verifier, sumsub, started, kind):
    person, applicant_id = started

    ok(notify(api, sumsub.webhook(applicant_id, kind)))

    assert _status(verifier, person) == (0, "PENDING")
    assert IdentityNotification.objects.get().kind == kind


def test_a_reviewed_webhook_still_pending_at_sumsub_changes_nothing(api, verifier, sumsub, started):
    """reviewAnswer counts only once reviewStatus is completed."""
    person, applicant_id = started
    body = sumsub.webhook(
        applicant_id, reviewStatus="onHold", reviewResult={"reviewAnswer": "GREEN"}
    )

    ok(notify(api, body))

    assert _status(verifier, person) == (0, "PENDING")


@pytest.mark.parametrize("algorithm", ["HMAC_SHA1_HEX", "HMAC_SHA256_HEX", "HMAC_SHA512_HEX"])
def test_each_digest_algorithm_sumsub_names_is_verified(api, verifier, sumsub, started, algorithm):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")

    ok(notify(api, sumsub.webhook(applicant_id, algorithm=algorithm)))

    assert _status(verifier, person) == (3, "ACCEPTED")


def _signed_with(body: bytes, **headers: str) -> tuple[bytes, dict[str, str]]:
    return body, {"Content-Type": "application/json"} | headers


def _bad_signatures(sumsub, applicant_id):
    body, headers = sumsub.webhook(applicant_id)
    digest = headers["X-Payload-Digest"]
    sha256 = hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {
        "another secret": sumsub.webhook(applicant_id, secret="not-the-webhook-secret"),
        "body changed": (body.replace(b'"GREEN"', b'"GREEN" '), headers),
        "no digest": _signed_with(body, **{"X-Payload-Digest-Alg": "HMAC_SHA256_HEX"}),
        "no algorithm": _signed_with(body, **{"X-Payload-Digest": digest}),
        "unknown algorithm": _signed_with(
            body, **{"X-Payload-Digest": digest, "X-Payload-Digest-Alg": "MD5"}
        ),
        "algorithm swapped": _signed_with(
            body, **{"X-Payload-Digest": sha256, "X-Payload-Digest-Alg": "HMAC_SHA512_HEX"}
        ),
        "empty digest": _signed_with(
            body, **{"X-Payload-Digest": "", "X-Payload-Digest-Alg": "HMAC_SHA256_HEX"}
        ),
    }


def test_bad_digests_are_refused_and_change_nothing(api, verifier, sumsub, started):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")

    for case, signed in _bad_signatures(sumsub, applicant_id).items():
        response = notify(api, signed)
        assert response.status_code == 401, case
        assert_error(response, 401, 3012, "PROVIDER_SIGNATURE_INVALID")

    assert _status(verifier, person) == (0, "PENDING")
    assert not IdentityNotification.objects.exists()


def test_without_a_webhook_secret_every_webhook_is_refused(
    api, verifier, sumsub, started, settings
):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")
    use_sumsub(settings, sumsub, SUMSUB_WEBHOOK_SECRET="")

    response = notify(api, sumsub.webhook(applicant_id, secret=""))

    assert_error(response, 401, 3012, "PROVIDER_SIGNATURE_INVALID")
    assert _status(verifier, person) == (0, "PENDING")


def test_a_replay_is_refused(api, verifier, sumsub, started):
    person, applicant_id = started
    sumsub.review(applicant_id, "RED", "RETRY")
    retry = sumsub.webhook(applicant_id)
    ok(notify(api, retry))
    sumsub.review(applicant_id, "GREEN")
    ok(notify(api, sumsub.webhook(applicant_id)))

    assert_error(notify(api, retry), 409, 3013, "PROVIDER_NOTIFICATION_REPLAYED")

    assert _status(verifier, person) == (3, "ACCEPTED")
    assert IdentityNotification.objects.count() == 2


def test_a_webhook_older_than_the_window_is_refused(api, verifier, sumsub, started):
    """Once its record is pruned a copy could not be told from a new one: refused by its age."""
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")
    made = clock.real_now() - timedelta(days=2, seconds=1)

    response = notify(api, sumsub.webhook(applicant_id, created_at=made))

    assert_error(response, 409, 3013, "PROVIDER_NOTIFICATION_REPLAYED")
    assert _status(verifier, person) == (0, "PENDING")
    # Sumsub's last retry, about a day after the first attempt, is still taken.
    day_old = clock.real_now() - timedelta(days=1, hours=1)
    ok(notify(api, sumsub.webhook(applicant_id, created_at=day_old)))
    assert _status(verifier, person) == (3, "ACCEPTED")


def test_a_webhook_from_the_future_is_refused(api, verifier, sumsub, started):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")
    made = clock.real_now() + timedelta(minutes=6)

    error = assert_error(
        notify(api, sumsub.webhook(applicant_id, created_at=made)), 400, 1001, "VALIDATION_FAILED"
    )

    assert set(error["fields"]) == {"body"}
    assert _status(verifier, person) == (0, "PENDING")


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"type": "applicantReviewed"}',
        b'{"type": "applicantReviewed", "createdAtMs": "yesterday"}',
        b'{"type": 7, "createdAtMs": "2026-01-01 00:00:00.000"}',
        b'{"type": "applicantReviewed", "createdAtMs": "2026-01-01 00:00:00.000", '
        b'"applicantId": ["x"]}',
    ],
)
def test_a_signed_body_that_is_not_sumsubs_shape_is_refused(api, sumsub, started, body):
    error = assert_error(notify(api, (body, sumsub.sign(body))), 400, 1001, "VALIDATION_FAILED")

    assert set(error["fields"]) == {"body"}
    assert not IdentityNotification.objects.exists()


def test_an_unknown_applicant_is_acknowledged_and_ignored(api, verifier, sumsub, started):
    """Sumsub sends every applicant of the account: one that is not a dossier here is taken
    (Sumsub would retry a refusal) and changes nothing."""
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")
    body, _ = sumsub.webhook(applicant_id)
    other = body.replace(applicant_id.encode(), b"0123456789abcdef01234567")

    ok(notify(api, (other, sumsub.sign(other))))

    assert _status(verifier, person) == (0, "PENDING")


def test_with_the_sandbox_provider_the_route_is_not_found(api, db):
    """The sandbox provider pushes nothing: the route answers 404."""
    body = b'{"type": "applicantReviewed"}'
    response = api.generic("POST", NOTIFICATIONS, data=body, content_type="application/json")

    assert_error(response, 404, 1002, "NOT_FOUND")


def test_other_methods_are_refused(api, sumsub, db):
    assert_error(api.get(NOTIFICATIONS), 405, 1003, "METHOD_NOT_ALLOWED")


def test_notifications_are_forgotten_after_the_window(api, sumsub, started, time_passes):
    """Beat prunes what the age check already refuses; younger records stay."""
    _, applicant_id = started
    ok(notify(api, sumsub.webhook(applicant_id, "applicantPending")))
    time_passes(24 * 3600)
    ok(notify(api, sumsub.webhook(applicant_id, "applicantPending")))
    time_passes(24 * 3600 + 1)

    assert prune_identity_notifications.apply().get() == 1

    assert IdentityNotification.objects.count() == 1


def test_the_sandbox_clock_never_moves_the_replay_window(
    api, verifier, sumsub, started, clock_advance
):
    """Sumsub dates a webhook by its own clock, real time: another merchant moving the sandbox
    clock past the window neither makes a fresh webhook too old nor lets beat forget what was
    taken (a copy of it is still a replay)."""
    person, applicant_id = started
    sumsub.review(applicant_id, "RED", "RETRY")
    retry = sumsub.webhook(applicant_id)
    ok(notify(api, retry))

    clock_advance(3 * 24 * 3600)
    sumsub.review(applicant_id, "GREEN")
    ok(notify(api, sumsub.webhook(applicant_id)))

    assert VerificationProcess.objects.get(dossier_id=applicant_id).status == "ACCEPTED"
    assert person.client.verification_level == 3
    assert prune_identity_notifications.apply().get() == 0
    assert_error(notify(api, retry), 409, 3013, "PROVIDER_NOTIFICATION_REPLAYED")
    assert IdentityNotification.objects.count() == 2
