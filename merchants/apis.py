from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants import examples
from merchants.ratelimits import AUTHENTICATE, SECURE_CANCEL, SECURE_TRADES, Limited
from merchants.representations import (
    ClientTokenOut,
    WebhookEventList,
    WebhookEventOut,
    webhook_event_json,
    webhook_event_list_json,
)
from merchants.serializers import AuthenticateClientIn, WebhookEventsQueryIn, client_data_from
from merchants.services import client_authenticate
from merchants.views import MerchantApiView
from merchants.webhooks.outbox import merchant_webhook_event_resend
from merchants.webhooks.selectors import webhook_events_list


class AuthenticateClientApi(MerchantApiView):
    rate_limit = Limited("auth.authenticate_client", AUTHENTICATE)
    body_serializer = AuthenticateClientIn
    errors = ("INVALID_TRADEURL", "NO_API_SECRET_CONFIGURED")
    doc = OperationDoc(
        summary="Issue a client token",
        description="""
            Gives your end user (a client) a token for the `/client/*` operations: your backend
            calls this with the user's platform id and trade URL, and hands the token to the
            user's app. The token is a JWT signed with your API secret, valid 24 hours; call
            again for a new one (each call issues a fresh token, the old ones stay valid until
            they expire).

            `clientTradeUrl` must belong to `clientPlatformId` (the URL's `partner` is the
            platform id minus 76561197960265728), else `INVALID_TRADEURL` (13) on
            `clientTradeUrl`. `clientId` is your own id of the user: it is copied to each of its
            trades as `externalClientUserId`.

            `clientData` is what you know about the user's risk (wager, KYC level, deposits,
            registration date, a hash of its KYC identifiers); it sets how much of an instant
            deposit the service backs for the user. It replaces the stored data on every call:
            fields left out fall back to 0, false or null. Accounts with the same `kycHash`
            share one limit.
        """,
        request=examples.AUTHENTICATE_CLIENT_REQUEST,
        response=examples.CLIENT_TOKEN,
    )

    @extend_schema(operation_id="authenticateClient", tags=["auth"], responses=ClientTokenOut)
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
    rate_limit = Limited("secure.webhooks.events", SECURE_TRADES)
    query_serializer = WebhookEventsQueryIn
    doc = OperationDoc(
        summary="List your webhook events",
        description="""
            The events the service sent (or is sending) to your callback URL, newest first, with
            their delivery state: `pending` (being delivered or waiting for its next attempt,
            `nextAttemptAt`), `delivered` (your URL answered 2xx) or `failed` (retries exhausted
            after about 72 hours; `lastError` says what the last attempt got). `payload` is the
            body as sent; receivers de-duplicate on its `id` and order on its `sequence`.

            Use it to find what your receiver missed, with `status=failed`, and send it again
            with `POST /secure/webhooks/events/{id}/resend`.
        """,
        parameters={"status": "failed", "limit": "20"},
        response=examples.WEBHOOK_EVENTS,
    )

    @extend_schema(operation_id="listWebhookEvents", tags=["webhooks"], responses=WebhookEventList)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        events = webhook_events_list(
            merchant=self.merchant(request), status=query.get("status"), limit=query["limit"]
        )
        return Response(webhook_event_list_json(events))


class WebhookEventResendApi(MerchantApiView):
    rate_limit = Limited("secure.webhooks.resend", SECURE_CANCEL)
    errors = ("WEBHOOK_EVENT_NOT_FOUND", "INVALID_TRANSITION")
    doc = OperationDoc(
        summary="Send a webhook event again",
        description="""
            Delivers a failed or delivered event once more: same `id`, same body, a fresh round
            of retries (`attempts` starts again at 0). Answers the event, now `pending`. An
            event still being delivered, and an approval callback (`trade.initiated` of a
            withdrawal, `crypto_withdrawal.awaiting_approval`: its outcome is already applied),
            answer `INVALID_TRANSITION`; another merchant's or an unknown id
            `WEBHOOK_EVENT_NOT_FOUND`.
        """,
        parameters={"id": examples.FAILED_EVENT["id"]},
        response=examples.RESENT_EVENT,
    )

    @extend_schema(
        operation_id="resendWebhookEvent",
        tags=["webhooks"],
        parameters=[OpenApiParameter("id", str, OpenApiParameter.PATH, description="event id")],
        responses=WebhookEventOut,
    )
    def post(self, request: Request, id: str) -> Response:
        event = merchant_webhook_event_resend(merchant=self.merchant(request), event_id=id)
        return Response(webhook_event_json(event))
