"""``/sandbox/clock``: the service clock, one for every merchant, moved forward on demand."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from core import clock
from core.api.docs import OperationDoc
from core.selectors import service_settings_get
from core.services import service_clock_advance
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.serializers import ClockAdvanceIn

CLOCK = inline_serializer(
    "SandboxClock",
    {"now": serializers.DateTimeField(), "offsetSeconds": serializers.IntegerField()},
)


def _clock_body() -> dict[str, object]:
    return {"now": clock.now(), "offsetSeconds": service_settings_get().clock_offset_seconds}


class SandboxClockApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    doc = OperationDoc(
        summary="Read the service clock",
        description="""
            The time the service runs on (`now`) and how far the sandbox moved it ahead of real
            time (`offsetSeconds`). Holds, cancel windows, `autoCancel`, offer expiries,
            approval timeouts, token expiry, caches and the ledger's 24-hour rule all read this
            clock; webhook timestamps stay real time.
        """,
        response=examples.CLOCK,
    )

    @extend_schema(operation_id="sandboxClock", tags=["sandbox"], responses=CLOCK)
    def get(self, request: Request) -> Response:
        return Response(_clock_body())


class SandboxClockAdvanceApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = ClockAdvanceIn
    doc = OperationDoc(
        summary="Move the service clock forward",
        description="""
            Jumps the service clock `minutes` ahead, so what waits for time happens now: a hold
            ends, a withdrawal becomes old enough to cancel (30 minutes), `autoCancel` fires, an
            offer expires, an approval times out. The periodic sweeps act on it at their next
            run. The clock only moves forward.

            Unlike the other helpers it is not scoped to you: there is one clock for the whole
            service, so it moves every merchant's timers. Integrators sharing a sandbox should
            expect time to jump.
        """,
        request=examples.CLOCK_ADVANCE_REQUEST,
        response=examples.CLOCK,
    )

    @extend_schema(operation_id="sandboxClockAdvance", tags=["sandbox"], responses=CLOCK)
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        service_clock_advance(minutes=body["minutes"])
        return Response(_clock_body())
