"""POST /client/verification/start with Sumsub: an applicant per process, the WebSDK's token
and hosted page in the answer, every request signed; Sumsub's refusals and outages answer the
contract's VERIFICATION_NOT_AVAILABLE with nothing written."""

import pytest

from merchants.verification import get_identity_provider
from merchants.verification.models import VerificationProcess
from tests.factories import assert_error
from tests.trading.helpers import ok
from tests.verification.sumsub.conftest import LEVEL, use_sumsub

pytestmark = pytest.mark.django_db

CALLS = [
    "POST /resources/applicants",
    "POST /resources/accessTokens/sdk",
    "POST /resources/sdkIntegrations/levels/-/websdkLink",
]


def test_start_answers_the_websdk_token_and_page_of_a_new_applicant(verifier, alice, sumsub):
    person = verifier.person(alice)

    data = verifier.started(person, "Ann.Lee@Example.com")

    process = VerificationProcess.objects.get()
    applicant = sumsub.applicants[data["dossierId"]]
    assert applicant.external_user_id == str(process.pk)
    assert applicant.email == "ann.lee@example.com"
    assert applicant.level_name == LEVEL
    assert data == {
        "dossierId": applicant.id,
        "captureUrl": sumsub.links[str(process.pk)],
        "sdkToken": sumsub.tokens[str(process.pk)],
    }
    assert data["sdkToken"].startswith("_act-")
    assert (process.client, process.dossier_id, process.status) == (
        person.client,
        applicant.id,
        "PENDING",
    )
    assert process.capture_url == data["captureUrl"]
    # Each call signed and accepted; the token and link are for that applicant, at the level.
    assert sumsub.paths() == CALLS
    assert sumsub.paths(status=401) == []
    token_call, link_call = sumsub.calls[1], sumsub.calls[2]
    expected = {"userId": str(process.pk), "levelName": LEVEL, "ttlInSecs": 1800}
    assert token_call.body == link_call.body == expected
    assert sumsub.calls[0].path == f"/resources/applicants?levelName={LEVEL}"


def test_without_an_email_none_is_sent(verifier, alice, sumsub):
    verifier.started(verifier.person(alice))

    assert set(sumsub.calls[0].body) == {"externalUserId"}


def test_a_level_name_with_reserved_characters_is_signed_as_sent(verifier, alice, sumsub, settings):
    """Sumsub warns that an unencoded level name breaks the signature: the signed path is
    the one sent, encoded."""
    sumsub.level = "kyc level+1"
    use_sumsub(settings, sumsub, SUMSUB_LEVEL_NAME="kyc level+1")

    verifier.started(verifier.person(alice))

    assert sumsub.calls[0].path == "/resources/applicants?levelName=kyc+level%2B1"
    assert sumsub.paths(status=401) == []


def test_a_retried_start_reuses_the_applicant_sumsub_already_has(sumsub, db):
    """Sumsub answers 409 for an externalUserId it has: the applicant is read, not made again."""
    provider = get_identity_provider()

    first = provider.start(tenant="t", reference="ref-0001", email="")
    second = provider.start(tenant="t", reference="ref-0001", email="")

    assert first.dossier_id == second.dossier_id
    assert len(sumsub.applicants) == 1
    assert sumsub.paths(status=409) == ["POST /resources/applicants"]
    assert "GET /resources/applicants/-;externalUserId=ref-0001/one" in sumsub.paths()
    assert first.sdk_token != second.sdk_token  # a new token each time


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_sumsub_errors_answer_not_available_and_write_nothing(verifier, alice, sumsub, status):
    person = verifier.person(alice)
    sumsub.fail_next(status)

    response = verifier.start(person)

    assert_error(response, 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert response["Retry-After"] == "60"
    assert not VerificationProcess.objects.exists()
    assert ok(verifier.start(person))["dossierId"]  # Sumsub is back


def test_a_failure_after_the_applicant_was_made_writes_nothing(verifier, alice, sumsub):
    """The token call fails: the applicant stays unused at Sumsub (its reference was never
    recorded here) and the next start opens another."""
    person = verifier.person(alice)
    sumsub.fail_route("POST /resources/accessTokens/sdk", 503)

    assert_error(verifier.start(person), 503, 3008, "VERIFICATION_NOT_AVAILABLE")

    assert not VerificationProcess.objects.exists()
    assert len(sumsub.applicants) == 1
    data = verifier.started(person)
    assert len(sumsub.applicants) == 2
    assert VerificationProcess.objects.get().dossier_id == data["dossierId"]


def test_a_wrong_secret_key_is_refused_by_sumsub_and_answers_not_available(
    verifier, alice, sumsub, settings
):
    person = verifier.person(alice)
    use_sumsub(settings, sumsub, SUMSUB_SECRET_KEY="not-the-key")

    assert_error(verifier.start(person), 503, 3008, "VERIFICATION_NOT_AVAILABLE")

    assert sumsub.paths(status=401) == ["POST /resources/applicants"]
    assert not sumsub.applicants
    assert not VerificationProcess.objects.exists()


def test_a_wrong_app_token_is_refused(verifier, alice, sumsub, settings):
    person = verifier.person(alice)
    use_sumsub(settings, sumsub, SUMSUB_APP_TOKEN="sbx:someone-else")

    assert_error(verifier.start(person), 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert sumsub.paths(status=401) == ["POST /resources/applicants"]


def test_an_unknown_level_answers_not_available(verifier, alice, sumsub, settings):
    use_sumsub(settings, sumsub, SUMSUB_LEVEL_NAME="no-such-level")

    assert_error(verifier.start(verifier.person(alice)), 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert sumsub.paths(status=400) == ["POST /resources/applicants"]


def test_sumsub_down_answers_not_available(verifier, alice, sumsub):
    person = verifier.person(alice)
    sumsub.stop()

    assert_error(verifier.start(person), 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert not VerificationProcess.objects.exists()


def test_a_hanging_sumsub_is_given_up_after_the_timeout(verifier, alice, sumsub, settings):
    person = verifier.person(alice)
    use_sumsub(settings, sumsub, SUMSUB_TIMEOUT_SECONDS=0.3)
    sumsub.held.set()

    response = verifier.start(person)

    assert sumsub.waiting.is_set()  # the request reached Sumsub and was never answered
    assert_error(response, 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert not VerificationProcess.objects.exists()


@pytest.mark.parametrize("missing", ["SUMSUB_APP_TOKEN", "SUMSUB_SECRET_KEY", "SUMSUB_LEVEL_NAME"])
def test_missing_settings_answer_not_available_without_calling(
    verifier, alice, sumsub, settings, missing
):
    use_sumsub(settings, sumsub, **{missing: ""})

    assert_error(verifier.start(verifier.person(alice)), 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert sumsub.calls == []
