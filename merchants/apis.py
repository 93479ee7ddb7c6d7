from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.models import WebhookEvent
from merchants.selectors import webhook_events_list
from merchants.serializers import (
    AuthenticateClientIn,
    ClientTokenOut,
    WebhookEventsQueryIn,
    client_data_from,
)
from merchants.services import client_authenticate
from merchants.views import MerchantApiView
from merchants.webhooks.outbox import merchant_webhook_event_resend


class AuthenticateClientApi(MerchantApiView):
    operation = "auth.authenticate_client"
    errors = ("NO_API_SECRET_CONFIGURED",)

    @extend_schema(
        operation_id="authenticateClient",
        tags=["auth"],
        request=AuthenticateClientIn,
        responses=ClientTokenOut,
        summary="Issue a 24-hour client token and store the client's data.",
    )
    def post(self, request: Request) -> Response:
        body = parse(AuthenticateClientIn, request.data)
        token = client_authenticate(
            merchant=self.caller(request).merchant,
            platform_id=body["clientPlatformId"],
            trade_url=body["clientTradeUrl"],
            client_id=body.get("clientId"),
            client_data=client_data_from(body.get("clientData")),
        )
        return Response({"token": token})


WEBHOOK_EVENT = inline_serializer(
    "WebhookEventOut",
    {
        "id": serializers.UUIDField(),
        "type": serializers.CharField(),
        "status": serializers.ChoiceField(choices=["pending", "delivered", "failed"]),
        "attempts": serializers.IntegerField(),
        "createdAt": serializers.DateTimeField(),
        "deliveredAt": serializers.DateTimeField(allow_null=True),
        "nextAttemptAt": serializers.DateTimeField(allow_null=True),
        "lastError": serializers.CharField(),
        "payload": serializers.JSONField(),
    },
)


def _event_json(event: WebhookEvent) -> dict[str, Any]:
    return {
        "id": str(event.id),
        "type": event.type,
        "status": event.status,
        "attempts": event.attempts,
        "createdAt": event.created_at,
        "deliveredAt": event.delivered_at,
        "nextAttemptAt": event.next_attempt_at,
        "lastError": event.last_error,
        "payload": event.payload,
    }


class WebhookEventsApi(MerchantApiView):
    operation = "secure.webhooks.events"

    @extend_schema(
        operation_id="listWebhookEvents",
        tags=["webhooks"],
        parameters=[
            OpenApiParameter("status", str, enum=["pending", "delivered", "failed"]),
            OpenApiParameter("limit", int, description="1-100, default 50"),
        ],
        responses=inline_serializer(
            "WebhookEventList", {"events": serializers.ListField(child=WEBHOOK_EVENT)}
        ),
    )
    def get(self, request: Request) -> Response:
        query = parse(WebhookEventsQueryIn, request.query_params)
        events = webhook_events_list(
            merchant=self.merchant(request), status=query.get("status"), limit=query["limit"]
        )
        return Response({"events": [_event_json(event) for event in events]})


class WebhookEventResendApi(MerchantApiView):
    operation = "secure.webhooks.resend"
    errors = ("WEBHOOK_EVENT_NOT_FOUND", "INVALID_TRANSITION")

    @extend_schema(
        operation_id="resendWebhookEvent",
        tags=["webhooks"],
        request=None,
        parameters=[OpenApiParameter("id", str, OpenApiParameter.PATH)],
        responses=WEBHOOK_EVENT,
    )
    def post(self, request: Request, id: str) -> Response:
        event = merchant_webhook_event_resend(merchant=self.merchant(request), event_id=id)
        return Response(_event_json(event))
