"""The HTTP API as the state machine calls it: each request's on-commit work runs as a worker's
would (webhook deliveries, purchases, offers, cancel completions), a task can be lost on its way
to the broker, and every answer is checked: the success envelope, or an error envelope with a key
this endpoint documents, its catalog code and status, never a crash."""

import json
from contextlib import ExitStack
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any
from unittest import mock

from django.test import TestCase
from django.urls import resolve
from rest_framework.test import APIClient

from core.api.schema import BODY_ERRORS, GENERIC_ERRORS, EnvelopeAutoSchema
from core.errors import CATALOG
from core.handoffs import HANDOFFS, Handoff
from core.json import dumps
from merchants.authentication import ApiKeyAuthentication, ClientTokenAuthentication

# The machine sends valid bodies with fresh credentials to working endpoints, so these documented
# answers would each mean a bug (in the service or in the machine), not a refusal.
NEVER_EXPECTED = frozenset(
    {
        *GENERIC_ERRORS,
        *BODY_ERRORS,
        *ApiKeyAuthentication.errors,
        *ClientTokenAuthentication.errors,
        "API_KEY_SCOPE_DENIED",
    }
)
# The only documented 5xx a request may get here: the bot fleet the machine switched off.
FLEET_ERRORS = frozenset({"NO_BOTS_AVAILABLE", "FLEET_DEGRADED"})

# Tasks a request hands to the broker after commit: a lost one never runs (a sweep re-drives it).
LOSABLE_TASKS = ("trading.withdrawal_purchase", "trading.deposit_offer", "trading.complete_cancels")


@dataclass(frozen=True)
class Answer:
    status: int
    data: Any
    error: str = ""  # the catalog key of a refusal

    @property
    def ok(self) -> bool:
        return not self.error


@cache
def _view_errors(view_class: type) -> frozenset[str]:
    schema = EnvelopeAutoSchema()
    schema.view = view_class()
    schema.method = "POST"
    return frozenset(schema.endpoint_errors())


def documented_errors(path: str) -> frozenset[str]:
    """The error keys the OpenAPI document lists for ``POST path``."""
    return _view_errors(resolve(path).func.cls)  # type: ignore[attr-defined]


def answer_check(path: str, response: Any, *, fleet_online: bool) -> Answer:
    where = f"POST {path} -> {response.status_code} {response.content[:400]!r}"
    assert response["Content-Type"] == "application/json", where
    body = json.loads(response.content, parse_float=Decimal)
    if response.status_code == 200:
        assert set(body) == {"requestId", "success", "data"}, where
        assert body["success"] is True, where
        return Answer(200, body["data"])
    assert set(body) == {"requestId", "success", "error"}, where
    assert body["success"] is False, where
    key = body["error"]["key"]
    spec = CATALOG.get(key)
    assert spec is not None, f"undocumented key: {where}"
    assert (body["error"]["code"], response.status_code) == (spec.code, spec.status), where
    assert key in documented_errors(path), f"not documented for this endpoint: {where}"
    assert key not in NEVER_EXPECTED, where
    if response.status_code >= 500:
        assert key in FLEET_ERRORS, f"5xx: {where}"
        assert not fleet_online, f"5xx with the fleet online: {where}"
    return Answer(response.status_code, None, key)


def _lost(trade_id: str) -> None:
    """The broker never got the task."""


class Api:
    def __init__(self) -> None:
        self.client = APIClient()

    def post(
        self,
        path: str,
        body: object,
        headers: dict[str, str],
        *,
        lost: str = "",
        fleet_online: bool = True,
    ) -> Answer:
        """``lost`` names a task of LOSABLE_TASKS the broker loses during this request."""
        with ExitStack() as stack:
            if lost:
                assert lost in LOSABLE_TASKS
                stack.enter_context(mock.patch.dict(HANDOFFS.bindings, {Handoff(lost): _lost}))
            with TestCase.captureOnCommitCallbacks(execute=True):
                if body is None:
                    response = self.client.post(path, headers=headers)
                else:
                    response = self.client.post(
                        path, dumps(body), content_type="application/json", headers=headers
                    )
        return answer_check(path, response, fleet_online=fleet_online)

    @staticmethod
    def run(work: Any) -> Any:
        """A worker's job (a beat sweep): its on-commit work runs too."""
        with TestCase.captureOnCommitCallbacks(execute=True):
            return work()
