"""``POST /sandbox/webhooks/test``: a signed test event of any type, on demand."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.representations import SandboxWebhookTestOut
from sandbox.serializers import SandboxWebhookTestIn
from sandbox.services.testevents import webhook_test_send


class SandboxWebhookTestApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    errors = ("MERCHANT_NO_CALLBACK_URL",)
    body_serializer = SandboxWebhookTestIn
    doc = OperationDoc(
        summary="Send your receiver a test event of any type",
        description="""
            Posts one webhook of `type` now, to your callback URL or to the `url` given, so
            your receiver can be built and checked against every event without waiting for a
            trade, a deposit or a cashout to reach that state. The body is shaped exactly as a
            real event of that type (the same `id`, `type`, `createdAt`, `sequence` and
            subject, rendered as the API renders it) with one more field, `"test": true`; its
            subject (a trade, deposit or cashout) is made up, with an id that is new each time,
            so it matches nothing of yours. It is signed with your webhook secret and sent as
            real events are (Standard Webhooks headers, 10 s to answer, no redirects followed),
            so a receiver that verifies real events verifies it too.

            `trade.*` events carry a client trade: a withdrawal, or a deposit with
            `tradeType: "deposit"` (a withdrawal's `trade.initiated` is the approval callback,
            a deposit's is informational). `crypto_withdrawal.awaiting_approval` is the
            cashout's approval callback. `callback_url.test` is the `{"test": true}` a new
            callback URL must answer with a 2xx before it is saved: try a URL with it first.

            Nothing is stored or retried and nothing follows from your answer: an approval's
            `{"action": "reject"}` rejects nothing. The answer reports what your receiver
            said (`statusCode`, the start of its body, or the `error` when it did not answer)
            and the body sent. Without a `url` and without an active callback URL:
            `MERCHANT_NO_CALLBACK_URL`.
        """,
        request=examples.WEBHOOK_TEST_REQUEST,
        response=examples.WEBHOOK_TEST,
    )

    @extend_schema(
        operation_id="sandboxWebhookTest", tags=["sandbox"], responses=SandboxWebhookTestOut
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        sent = webhook_test_send(
            merchant=self.merchant(request),
            type=body["type"],
            url=body.get("url", ""),
            trade_type=body.get("tradeType", "withdraw"),
        )
        answer: SandboxWebhookTestOut = {
            "webhookId": sent.webhook_id,
            "type": body["type"],
            "url": sent.url,
            "statusCode": sent.status_code,
            "answer": sent.answer,
            "latencyMs": sent.latency_ms,
            "error": sent.error or None,
            "payload": sent.payload,
        }
        return Response(answer)
