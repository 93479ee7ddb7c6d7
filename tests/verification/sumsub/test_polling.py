"""The verdict sweep asks Sumsub (GET /resources/applicants/{id}/one) when a webhook is late or
lost; a webhook arriving after the sweep applied its verdict changes nothing."""

import pytest

from core import clock
from merchants.verification.models import VerificationProcess
from merchants.verification.tasks import sweep_verifications
from tests.trading.helpers import ok
from tests.verification.sumsub.conftest import notify, use_sumsub

pytestmark = pytest.mark.django_db


def _sweep() -> int:
    result: int = sweep_verifications.apply().get()
    return result


@pytest.fixture
def started(verifier, alice, sumsub):
    person = verifier.person(alice)
    return person, verifier.started(person)["dossierId"]


def _due(clock_advance) -> None:
    process = VerificationProcess.objects.get(status="PENDING")
    clock_advance(int((process.next_check_at - clock.now()).total_seconds()) + 1)


def test_a_late_webhook_is_covered_by_the_sweep(api, verifier, sumsub, started, clock_advance):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")  # decided; its webhook is not here yet
    _due(clock_advance)

    assert _sweep() == 1

    assert f"GET /resources/applicants/{applicant_id}/one" in sumsub.paths(status=200)
    process = VerificationProcess.objects.get()
    assert (process.status, process.next_check_at) == ("ACCEPTED", None)
    assert person.client.verification_level == 3
    # The webhook arrives at last: taken, and nothing moves again.
    ok(notify(api, sumsub.webhook(applicant_id)))
    again = VerificationProcess.objects.get()
    assert (again.status, again.completed_at) == ("ACCEPTED", process.completed_at)
    assert _sweep() == 0


@pytest.mark.parametrize(
    ("answer", "reject_type", "status"),
    [("RED", "FINAL", "REJECTED"), ("RED", None, "REJECTED"), ("RED", "RETRY", "PENDING")],
)
def test_red_answers_by_polling(
    verifier, sumsub, started, clock_advance, answer, reject_type, status
):
    person, applicant_id = started
    sumsub.review(applicant_id, answer, reject_type)
    _due(clock_advance)

    assert _sweep() == 1

    assert VerificationProcess.objects.get().status == status
    assert person.client.verification_level == 0


def test_undecided_applicants_stay_pending(sumsub, started, clock_advance):
    _, applicant_id = started
    sumsub.resubmit(applicant_id)  # documents sent, review pending
    _due(clock_advance)

    assert _sweep() == 1

    process = VerificationProcess.objects.get()
    assert (process.status, process.checks) == ("PENDING", 1)


@pytest.mark.parametrize("status", [401, 429, 500, 503])
def test_sumsub_failing_leaves_the_process_for_the_next_check(
    verifier, sumsub, started, clock_advance, status
):
    person, applicant_id = started
    sumsub.review(applicant_id, "GREEN")
    sumsub.fail_next(status)
    _due(clock_advance)

    assert _sweep() == 1

    process = VerificationProcess.objects.get()
    assert (process.status, process.checks) == ("PENDING", 1)
    _due(clock_advance)
    assert _sweep() == 1
    assert VerificationProcess.objects.get().status == "ACCEPTED"
    assert person.client.verification_level == 3


def test_a_hanging_sumsub_does_not_hold_the_sweep(
    verifier, sumsub, started, clock_advance, settings
):
    _, applicant_id = started
    sumsub.review(applicant_id, "GREEN")
    use_sumsub(settings, sumsub, SUMSUB_TIMEOUT_SECONDS=0.3)
    sumsub.held.set()
    _due(clock_advance)

    assert _sweep() == 1

    assert sumsub.waiting.is_set()
    assert VerificationProcess.objects.get().status == "PENDING"
