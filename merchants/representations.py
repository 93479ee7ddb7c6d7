"""How merchants' own things look in API responses (client tokens, webhook events): each shape
once, as a ``TypedDict`` the body builders return and the OpenAPI document is generated from."""

from datetime import datetime
from typing import Any, Literal, TypedDict, cast

from core.shapes import Uuid
from merchants.webhooks.models import WebhookEvent

WebhookEventStatus = Literal["pending", "delivered", "failed"]


class ClientTokenOut(TypedDict):
    token: str


class WebhookEventOut(TypedDict):
    id: Uuid
    type: str
    status: WebhookEventStatus
    attempts: int
    createdAt: datetime
    deliveredAt: datetime | None
    nextAttemptAt: datetime | None
    lastError: str
    payload: dict[str, Any]


class WebhookEventList(TypedDict):
    events: list[WebhookEventOut]


def webhook_event_json(event: WebhookEvent) -> WebhookEventOut:
    return {
        "id": str(event.id),
        "type": event.type,
        "status": cast(WebhookEventStatus, event.status),
        "attempts": event.attempts,
        "createdAt": event.created_at,
        "deliveredAt": event.delivered_at,
        "nextAttemptAt": event.next_attempt_at,
        "lastError": event.last_error,
        "payload": event.payload,
    }


def webhook_event_list_json(events: list[WebhookEvent]) -> WebhookEventList:
    return {"events": [webhook_event_json(event) for event in events]}
