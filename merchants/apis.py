from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.representations import (
    ClientTokenOut,
    WebhookEventList,
    WebhookEventOut,
    webhook_event_json,
    webhook_event_list_json,
)
from merchants.selectors import webhook_events_list
from merchants.serializers import AuthenticateClientIn, WebhookEventsQueryIn, client_data_from
from merchants.services import client_authenticate
from merchants.views import MerchantApiView
from merchants.webhooks.outbox import merchant_webhook_event_resend


class AuthenticateClientApi(MerchantApiView):
    operation = "auth.authenticate_client"
    body_serializer = AuthenticateClientIn
    errors = ("INVALID_TRADEURL", "NO_API_SECRET_CONFIGURED")

    @extend_schema(
        operation_id="authenticateClient",
        tags=["auth"],
        responses=ClientTokenOut,
        summary="Issue a 24-hour client token and store the client's data.",
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        token = client_authenticate(
            merchant=self.caller(request).merchant,
            platform_id=body["clientPlatformId"],
            trade_url=body["clientTradeUrl"],
            client_id=body.get("clientId"),
            client_data=client_data_from(body.get("clientData")),
        )
        answer: ClientTokenOut = {"token": token}
        return Response(answer)


class WebhookEventsApi(MerchantApiView):
    operation = "secure.webhooks.events"
    query_serializer = WebhookEventsQueryIn

    @extend_schema(operation_id="listWebhookEvents", tags=["webhooks"], responses=WebhookEventList)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        events = webhook_events_list(
            merchant=self.merchant(request), status=query.get("status"), limit=query["limit"]
        )
        return Response(webhook_event_list_json(events))


class WebhookEventResendApi(MerchantApiView):
    operation = "secure.webhooks.resend"
    errors = ("WEBHOOK_EVENT_NOT_FOUND", "INVALID_TRANSITION")

    @extend_schema(
        operation_id="resendWebhookEvent",
        tags=["webhooks"],
        parameters=[OpenApiParameter("id", str, OpenApiParameter.PATH)],
        responses=WebhookEventOut,
    )
    def post(self, request: Request, id: str) -> Response:
        event = merchant_webhook_event_resend(merchant=self.merchant(request), event_id=id)
        return Response(webhook_event_json(event))
