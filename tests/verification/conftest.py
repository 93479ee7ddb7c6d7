"""The verification endpoints as the tests drive them, over alice's and bob's clients."""

from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from merchants.models import Client

# The verdict sweep queues one poll per due process; they run in the test's process.
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, platform_id
from tests.trading.helpers import client_token, ok

START = "/client/verification/start"
STATUS = "/client/verification/status"
LINK = "/client/verification/link"
PROVIDER = "/sandbox/verification-provider"


def decide_path(dossier_id: str) -> str:
    return f"/sandbox/verification/{dossier_id}"


@dataclass
class Person:
    """One platform account of a merchant, with its client token."""

    actor: Actor
    partner: int
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def client(self) -> Client:
        return Client.objects.get(
            merchant=self.actor.merchant, platform_id=platform_id(self.partner)
        )


class Verifier:
    def __init__(self, api: APIClient) -> None:
        self.api = api

    def person(self, actor: Actor, partner: int = 1, **client_data: Any) -> Person:
        return Person(actor, partner, client_token(self.api, actor, partner, **client_data))

    def start(self, person: Person, body: Any = None):
        return self.api.post(
            START, {} if body is None else body, format="json", headers=person.headers
        )

    def started(self, person: Person, email: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = ok(self.start(person, {"email": email} if email else {}))
        return data

    def status(self, person: Person):
        return self.api.get(STATUS, headers=person.headers)

    def link(self, person: Person, body: Any):
        return self.api.post(LINK, body, format="json", headers=person.headers)

    def decide(self, actor: Actor, dossier_id: str, status: Any):
        return self.api.post(
            decide_path(dossier_id), {"status": status}, format="json", headers=actor.headers
        )

    def provider(self, actor: Actor, status: str) -> None:
        assert ok(
            self.api.post(PROVIDER, {"status": status}, format="json", headers=actor.headers)
        ) == {"status": status}

    def verified(self, person: Person, email: str | None = None) -> dict[str, Any]:
        """Start and have the provider accept; returns the process as the helper answers it."""
        dossier_id = self.started(person, email)["dossierId"]
        data: dict[str, Any] = ok(self.decide(person.actor, dossier_id, "ACCEPTED"))
        return data


@pytest.fixture
def verifier(api: APIClient) -> Verifier:
    return Verifier(api)
