"""``/sandbox/demo-callback``: the demo merchant's webhook receiver and what it got."""

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.docs import OperationDoc
from core.errors import DomainError
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.services.democallback import demo_callback_receive, demo_callback_received


class SandboxDemoCallbackApi(MerchantApiView):
    """The demo merchant's receiver: verifies each signature, approves every withdrawal and
    keeps what it got. Webhooks are posted to ``?merchant=<id>`` without an API key."""

    rate_limit = Limited("sandbox", SECURE_TRADE)
    doc = OperationDoc(
        summary="List what the demo webhook receiver got",
        description="""
            The sandbox runs a demo receiver for your webhooks, so you can watch them before
            building your own: point your callback URL at
            `/sandbox/demo-callback?merchant=<your merchant id>` (the quick start's demo
            merchant does). It verifies each delivery's signature (Standard Webhooks:
            `webhook-id`, `webhook-timestamp`, `webhook-signature` with your `whsec_` secret) and
            refuses one that does not verify, approves every withdrawal and cashout (it answers
            2xx), and keeps the last 200 deliveries it accepted: this lists them, newest first,
            with the body as received.
        """,
        response=examples.DEMO_CALLBACK_RECEIVED,
    )

    def _is_delivery(self) -> bool:
        # No request while the OpenAPI description is generated.
        request = getattr(self, "request", None)
        return request is not None and request.method == "POST"

    def get_authenticators(self) -> list[Any]:
        return [] if self._is_delivery() else super().get_authenticators()

    def get_permissions(self) -> list[Any]:
        return [] if self._is_delivery() else list(super().get_permissions())

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method == "POST":
            APIView.initial(self, request, *args, **kwargs)
        else:
            super().initial(request, *args, **kwargs)

    @extend_schema(
        operation_id="sandboxDemoCallbackEvents",
        tags=["sandbox"],
        responses=inline_serializer(
            "SandboxReceived",
            {
                "webhookId": serializers.CharField(),
                "type": serializers.CharField(),
                "signatureValid": serializers.BooleanField(),
                "receivedAt": serializers.DateTimeField(),
                "payload": serializers.JSONField(),
            },
            many=True,
        ),
    )
    def get(self, request: Request) -> Response:
        rows = demo_callback_received(merchant=self.merchant(request))
        return Response(
            [
                {
                    "webhookId": row.webhook_id,
                    "type": row.type,
                    "signatureValid": row.signature_valid,
                    "receivedAt": row.received_at,
                    "payload": row.payload,
                }
                for row in rows
            ]
        )

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        accepted = demo_callback_receive(
            merchant_id=request.query_params.get("merchant", ""),
            body=request.body,
            headers={k.lower(): v for k, v in request.headers.items()},
        )
        if not accepted:
            raise DomainError("INVALID_TOKEN", "The signature did not verify.")
        return Response({"received": True})
