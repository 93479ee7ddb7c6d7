"""One webhook delivered many times at once (Sumsub's retry racing the first delivery, or an
attacker's copies), with real threads against PostgreSQL: taken once, the others refused as
replays; the verdict applied once."""

import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from merchants.verification.models import IdentityNotification, VerificationProcess
from tests.factories import make_actor
from tests.verification.conftest import Verifier
from tests.verification.sumsub.conftest import notify

COPIES = 8


@pytest.mark.django_db(transaction=True)
def test_copies_of_one_webhook_at_once_are_taken_once(sumsub):
    verifier = Verifier(APIClient())
    person = verifier.person(make_actor(name="Racer"))
    applicant_id = verifier.started(person)["dossierId"]
    sumsub.review(applicant_id, "GREEN")
    signed = sumsub.webhook(applicant_id)
    barrier = threading.Barrier(COPIES, timeout=10)
    answers: list[tuple[int, int | None]] = []

    def deliver() -> None:
        try:
            barrier.wait()
            response = notify(APIClient(), signed)
            code = None if response.status_code == 200 else response.json()["error"]["code"]
            answers.append((response.status_code, code))
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(COPIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(answers, key=lambda a: a[0]) == [(200, None)] + [(409, 3013)] * (COPIES - 1)
    assert IdentityNotification.objects.count() == 1
    process = VerificationProcess.objects.get()
    assert process.status == "ACCEPTED"
    assert person.client.verification_level == 3
