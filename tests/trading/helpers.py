"""Helpers of the game-world tests: exact (Decimal) JSON, callers of both kinds, the clock."""

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from rest_framework.test import APIClient

from core.models import ServiceSettings
from core.selectors import SETTINGS_CACHE_KEY
from tests.factories import Actor, assert_request_id, auth_body

AUTHENTICATE = "/auth/authenticate-client"


def body(response) -> dict[str, Any]:
    """The whole envelope, numbers as Decimal so money compares exactly."""
    parsed: dict[str, Any] = json.loads(response.content, parse_float=Decimal)
    return parsed


def ok(response) -> Any:
    """``data`` of a 200 success envelope, numbers as Decimal."""
    assert response.status_code == 200, response.content
    envelope = body(response)
    assert envelope["success"] is True
    assert set(envelope) == {"requestId", "success", "data"}
    assert_request_id(response)
    return envelope["data"]


def client_token(api: APIClient, actor: Actor, partner: int = 1, **client_data: Any) -> str:
    """A client token of ``actor`` for the platform user behind ``partner``."""
    payload = auth_body(partner, clientData=client_data) if client_data else auth_body(partner)
    response = api.post(AUTHENTICATE, payload, format="json", headers=actor.headers)
    return str(ok(response)["token"])


@dataclass
class Caller:
    """A merchant by its key on ``/secure/...``, or a client of it by token on ``/client/...``."""

    api: APIClient
    actor: Actor
    kind: str  # "secure" or "client"
    headers: dict[str, str]

    def get(self, path: str, params: dict[str, Any] | None = None):
        """``path`` without its prefix, e.g. ``/market``."""
        return self.api.get(f"/{self.kind}{path}", params or {}, headers=self.headers)


def caller(api: APIClient, actor: Actor, kind: str, partner: int = 1) -> Caller:
    if kind == "secure":
        return Caller(api, actor, kind, actor.headers)
    token = client_token(api, actor, partner)
    return Caller(api, actor, kind, {"Authorization": f"Bearer {token}"})


def clock_move(seconds: int) -> None:
    """Moves the service clock (core.clock.now) forward."""
    row, _ = ServiceSettings.objects.get_or_create(id=ServiceSettings.SINGLETON_ID)
    row.clock_offset_seconds += seconds
    row.save(update_fields=["clock_offset_seconds"])
    cache.delete(SETTINGS_CACHE_KEY)


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["marketHashName"] for item in items]


def prices(items: list[dict[str, Any]]) -> list[Decimal]:
    return [item["offer"]["price"] for item in items]
