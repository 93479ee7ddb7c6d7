"""The verdict sweep: pending processes are asked again on a backing-off deadline, so a verdict
reaches the service even when nobody calls the sandbox helper (or the provider was down)."""

from datetime import timedelta

import pytest
from django.test import override_settings

from core import clock
from merchants.verification.base import Verdict
from merchants.verification.models import VerificationProcess
from merchants.verification.services import verification_process_claim, verification_process_poll
from merchants.verification.tasks import sweep_verifications
from sandbox.identity import sandbox_dossier_decide

pytestmark = pytest.mark.django_db


def _sweep() -> int:
    result: int = sweep_verifications.apply().get()
    return result


def test_nothing_is_due_before_the_first_check(verifier, alice):
    verifier.started(verifier.person(alice))

    assert _sweep() == 0
    assert VerificationProcess.objects.get().checks == 0


def test_a_pending_verdict_moves_the_deadline_on_with_backoff(verifier, alice, clock_advance):
    verifier.started(verifier.person(alice))
    gaps = []
    for _ in range(8):
        process = VerificationProcess.objects.get()
        clock_advance(int((process.next_check_at - clock.now()).total_seconds()) + 1)
        assert _sweep() == 1
        process.refresh_from_db()
        assert process.status == "PENDING"
        gaps.append(round((process.next_check_at - clock.now()).total_seconds() / 60))

    assert gaps == [2, 4, 8, 16, 32, 60, 60, 60]
    assert VerificationProcess.objects.get().checks == 8


def test_a_decided_dossier_is_applied_by_the_sweep(verifier, alice, clock_advance):
    person = verifier.person(alice)
    started = verifier.started(person, "ann@example.com")
    assert sandbox_dossier_decide(dossier_id=started["dossierId"], verdict=Verdict.REJECTED)
    clock_advance(60)

    assert _sweep() == 1

    process = VerificationProcess.objects.get()
    assert (process.status, process.next_check_at) == ("REJECTED", None)
    assert _sweep() == 0  # closed processes are not asked again


def test_an_offline_provider_is_asked_again_later(verifier, alice, clock_advance):
    person = verifier.person(alice)
    started = verifier.started(person)
    assert sandbox_dossier_decide(dossier_id=started["dossierId"], verdict=Verdict.ACCEPTED)
    verifier.provider(alice, "offline")
    clock_advance(60)

    assert _sweep() == 1

    process = VerificationProcess.objects.get()
    assert (process.status, process.checks) == ("PENDING", 1)
    verifier.provider(alice, "online")
    clock_advance(int((process.next_check_at - clock.now()).total_seconds()) + 1)
    assert _sweep() == 1
    assert VerificationProcess.objects.get().status == "ACCEPTED"
    assert person.client.verification_level == 3


def test_only_one_of_two_workers_claims_a_due_process(verifier, alice, clock_advance):
    """Two workers read the same due process; the second claim finds ``checks`` moved on."""
    verifier.started(verifier.person(alice))
    clock_advance(60)
    first_read, second_read = VerificationProcess.objects.get(), VerificationProcess.objects.get()

    assert verification_process_claim(process=first_read, now=clock.now()) is True
    assert verification_process_claim(process=second_read, now=clock.now()) is False

    assert VerificationProcess.objects.get().checks == 1


def test_a_second_poll_before_the_new_deadline_does_nothing(verifier, alice, clock_advance):
    verifier.started(verifier.person(alice))
    clock_advance(60)
    process_id = VerificationProcess.objects.get().pk

    verification_process_poll(process_id=process_id)
    deadline = VerificationProcess.objects.get().next_check_at
    verification_process_poll(process_id=process_id)

    process = VerificationProcess.objects.get()
    assert (process.checks, process.next_check_at) == (1, deadline)


@override_settings(SANDBOX_AUTOPILOT_SECONDS=5)
def test_the_autopilot_accepts_dossiers_by_itself(verifier, alice, clock_advance):
    person = verifier.person(alice)
    verifier.started(person, "ann@example.com")
    clock_advance(60)

    assert _sweep() == 1

    assert VerificationProcess.objects.get().status == "ACCEPTED"
    assert person.client.verification_level == 3


def test_autopilot_off_leaves_dossiers_to_the_helper(verifier, alice, clock_advance):
    verifier.started(verifier.person(alice))
    clock_advance(int(timedelta(hours=2).total_seconds()))

    _sweep()

    assert VerificationProcess.objects.get().status == "PENDING"
