"""``/sandbox/clock``: the service clock, one for every merchant, moved forward on demand."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core import clock
from core.selectors import service_settings_get
from core.services import service_clock_advance
from merchants.views import MerchantApiView
from sandbox.serializers import ClockAdvanceIn

CLOCK = inline_serializer(
    "SandboxClock",
    {"now": serializers.DateTimeField(), "offsetSeconds": serializers.IntegerField()},
)


def _clock_body() -> dict[str, object]:
    return {"now": clock.now(), "offsetSeconds": service_settings_get().clock_offset_seconds}


class SandboxClockApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxClock",
        tags=["sandbox"],
        responses=CLOCK,
        summary="The service clock: one clock for every merchant.",
    )
    def get(self, request: Request) -> Response:
        return Response(_clock_body())


class SandboxClockAdvanceApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxClockAdvance",
        tags=["sandbox"],
        summary="Move the service clock forward (for every merchant).",
        description=(
            "Unlike the other sandbox helpers, the service clock is not scoped to the calling "
            "merchant: there is one clock for the whole service, so advancing it moves every "
            "merchant's timers (offer expiries, holds, cancel windows, caches, sweeps). It only "
            "moves forward."
        ),
        request=ClockAdvanceIn,
        responses=CLOCK,
    )
    def post(self, request: Request) -> Response:
        body = parse(ClockAdvanceIn, request.data)
        service_clock_advance(minutes=body["minutes"])
        return Response(_clock_body())
