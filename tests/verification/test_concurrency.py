"""Two starts for one client at the same moment, with real threads against PostgreSQL: both pass
the first check and reach the provider; the client's row lock lets exactly one record its
process."""

import threading
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from merchants.verification import get_identity_provider
from merchants.verification.base import Dossier
from merchants.verification.models import VerificationProcess
from sandbox.identity import SandboxIdentityProvider
from sandbox.models import SandboxDossier
from tests.factories import make_actor
from tests.verification.conftest import Verifier

STARTS = 2
RENDEZVOUS = threading.Barrier(STARTS, timeout=10)


class RendezvousProvider(SandboxIdentityProvider):
    """The sandbox provider, answering each start only once every racer has called it."""

    def start(self, *, tenant: str, reference: str, email: str) -> Dossier:
        dossier = super().start(tenant=tenant, reference=reference, email=email)
        RENDEZVOUS.wait()
        return dossier


@pytest.fixture
def rendezvous_provider() -> Iterator[None]:
    path = f"{__name__}.RendezvousProvider"
    get_identity_provider.cache_clear()
    with override_settings(IDENTITY_PROVIDER=path):
        yield
    get_identity_provider.cache_clear()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("rendezvous_provider")
def test_two_starts_at_once_record_one_process():
    actor = make_actor(name="Racer")
    person = Verifier(APIClient()).person(actor)
    answers: list[tuple[int, int | None]] = []

    def start() -> None:
        try:
            response = APIClient().post(
                "/client/verification/start", {}, format="json", headers=person.headers
            )
            code = None if response.status_code == 200 else response.json()["error"]["code"]
            answers.append((response.status_code, code))
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(STARTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(answers, key=lambda a: a[0]) == [(200, None), (409, 3007)]
    assert VerificationProcess.objects.filter(status="PENDING").count() == 1
    # The loser's dossier stays unused at the provider: it was opened before the lock.
    assert SandboxDossier.objects.count() == STARTS
