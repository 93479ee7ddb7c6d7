"""Errors to Sentry when ``SENTRY_DSN`` is set: sentry-sdk with its Django integration (requests,
and the ``logger.exception`` of the exception handler through its logging integration) and its
Celery integration (tasks that fail). Every event is tagged with the request id the envelope and
the log lines carry, so an error a merchant reports is found by its ``requestId``."""

from typing import TYPE_CHECKING, Any

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.django import DjangoIntegration

from core.context import current_request_id

if TYPE_CHECKING:
    from sentry_sdk._types import Event


def sentry_init(*, dsn: str, environment: str, release: str, traces_sample_rate: float) -> None:
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        release=release,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        traces_sample_rate=traces_sample_rate,
        send_default_pii=False,  # no caller addresses, cookies or users in the events
        before_send=_with_request_id,
    )


def _with_request_id(event: "Event", hint: dict[str, Any]) -> "Event":
    request_id = current_request_id()
    if request_id != "-":
        event.setdefault("tags", {})["requestId"] = request_id
    return event
