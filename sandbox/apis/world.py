"""The calling merchant's sandbox world as a whole: the autopilot switch and the reset."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.representations import (
    SandboxAutopilotOut,
    SandboxResetOut,
    autopilot_json,
    reset_json,
)
from sandbox.serializers import SandboxAutopilotIn
from sandbox.services.autopilot import sandbox_autopilot_set
from sandbox.services.world import sandbox_world_reset


class SandboxAutopilotApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxAutopilotIn
    doc = OperationDoc(
        summary="Stop or restart the autopilot in your sandbox world",
        description="""
            With `SANDBOX_AUTOPILOT_SECONDS` set (`bin/start`: 5) the sandbox world moves by
            itself: bought items are delivered, offers accepted, holds ended, chain
            transactions confirmed, one step per item once it has been idle that long.
            `enabled: false` stops that in your world only, so that
            `POST /sandbox/trades/{tradeId}/events`, confirmations, reorgs and cancels find a
            trade or a transaction where the step needs it; `true` (or `POST /sandbox/reset`)
            starts it again. The service's own work goes on either way: approvals, purchases,
            the bots' offers. Other merchants' worlds keep moving. `stepSeconds` 0: the
            service runs no autopilot at all.
        """,
        request=examples.AUTOPILOT_REQUEST,
        response=examples.AUTOPILOT,
    )

    @extend_schema(
        operation_id="sandboxSetAutopilot", tags=["sandbox"], responses=SandboxAutopilotOut
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        sandbox_autopilot_set(merchant=self.merchant(request), enabled=body["enabled"])
        return Response(autopilot_json(enabled=body["enabled"]))


class SandboxResetApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    doc = OperationDoc(
        summary="Put your sandbox world back as it starts",
        description="""
            Undoes every setting of your `/sandbox/` helpers: configured platform users are the
            generated ones again (state 1, a deterministic inventory), every bot is online,
            every chain runs and accepts broadcasts, the identity provider is online and the
            autopilot is on. What happened stays: trades, transfers, dossiers and the demo
            receiver's log. The service clock is not moved back (one clock for every
            merchant, only forward), and the market, one for every merchant, is not refilled
            (`manage.py seed_sandbox` does). Other merchants' worlds are untouched. No body.
        """,
        response=examples.RESET,
    )

    @extend_schema(
        operation_id="sandboxReset", tags=["sandbox"], request=None, responses=SandboxResetOut
    )
    def post(self, request: Request) -> Response:
        forgotten = sandbox_world_reset(merchant=self.merchant(request))
        return Response(reset_json(platform_users_forgotten=forgotten))
