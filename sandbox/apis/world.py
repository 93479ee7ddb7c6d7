"""The calling merchant's sandbox world as a whole: the autopilot switch and the reset."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.views import MerchantApiView
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
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxSetAutopilot",
        tags=["sandbox"],
        request=SandboxAutopilotIn,
        responses=SandboxAutopilotOut,
        summary=(
            "Let the autopilot move the calling merchant's trades and chain transactions, or "
            "stop it to move them by hand."
        ),
        description=(
            "With `SANDBOX_AUTOPILOT_SECONDS` set (`bin/start`: 5), the sandbox world moves by "
            "itself: withdrawals are delivered, offers accepted, holds ended, transactions "
            "confirmed. `enabled: false` stops that for the calling merchant only, so "
            "`/sandbox/trades/{tradeId}/events`, `/sandbox/crypto/transfers/{txHash}/...` and "
            "cancels meet a trade or a transaction in the state they need; other merchants' "
            "worlds keep moving. The workers' own steps (approvals, purchases, a deposit's offer) "
            "still run. `stepSeconds` 0: the service runs no autopilot at all."
        ),
    )
    def post(self, request: Request) -> Response:
        body = parse(SandboxAutopilotIn, request.data)
        sandbox_autopilot_set(merchant=self.merchant(request), enabled=body["enabled"])
        return Response(autopilot_json(enabled=body["enabled"]))


class SandboxResetApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxReset",
        tags=["sandbox"],
        request=None,
        responses=SandboxResetOut,
        summary="Put the calling merchant's sandbox world back as it starts.",
        description=(
            "Undoes every setting of the calling merchant's `/sandbox/` helpers: configured "
            "platform users become generated ones again (state 1, a deterministic inventory), "
            "every bot is online, every chain runs and accepts broadcasts, the identity provider "
            "is online and the autopilot is on. What happened stays: trades, transfers, dossiers "
            "and the demo receiver's log. The service clock is not moved back: there is one "
            "clock for every merchant, and it only moves forward. The market is one world for "
            "every merchant too (`manage.py seed_sandbox` refills it). Other merchants' worlds "
            "are untouched."
        ),
    )
    def post(self, request: Request) -> Response:
        forgotten = sandbox_world_reset(merchant=self.merchant(request))
        return Response(reset_json(platform_users_forgotten=forgotten))
