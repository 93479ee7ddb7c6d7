"""Sandbox helpers that drive the simulated world (present only when SANDBOX is true)."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api.serializers import parse
from core import clock
from core.errors import DomainError
from core.selectors import service_settings_get
from core.services import service_clock_advance
from merchants.views import MerchantApiView
from trading.representations import TradeOut, trade_json
from trading.sandbox.democallback import demo_callback_receive, demo_callback_received
from trading.sandbox.events import sandbox_trade_event
from trading.sandbox.services import sandbox_fleet_set, sandbox_platform_user_set
from trading.serializers import (
    ClockAdvanceIn,
    SandboxBotsIn,
    SandboxPlatformUserIn,
    SandboxTradeEventIn,
)


class SandboxPlatformUserApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxSetPlatformUser",
        tags=["sandbox"],
        summary="Configure a platform user in the calling merchant's sandbox world only.",
        description=(
            "Other merchants keep seeing this platform id as the generated user (state 1, a "
            "deterministic inventory); the user's cached inventory and trade URL checks of "
            "the calling merchant are forgotten."
        ),
        request=SandboxPlatformUserIn,
        responses=inline_serializer(
            "SandboxPlatformUser",
            {"platformId": serializers.CharField(), "configured": serializers.BooleanField()},
        ),
    )
    def post(self, request: Request) -> Response:
        body = parse(SandboxPlatformUserIn, request.data)
        user = sandbox_platform_user_set(
            merchant=self.merchant(request),
            platform_id=body["platformId"],
            trade_url_state=body.get("tradeUrlState"),
            anti_cheat_banned=body["antiCheatBanned"],
            game_bans=body["gameBans"],
            economy_ban=body["economyBan"],
            escrow_days=body["escrowDays"],
            inventory_private=body["inventoryPrivate"],
            inventory=body["inventory"],
            fault=body["fault"],
        )
        return Response({"platformId": user.platform_id, "configured": True})


class SandboxBotsApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxSetBots",
        tags=["sandbox"],
        summary="Set every bot's status in the calling merchant's sandbox world only.",
        request=SandboxBotsIn,
        responses=inline_serializer(
            "SandboxFleet",
            {
                "status": serializers.CharField(),
                "bots": inline_serializer(
                    "SandboxBot",
                    {
                        "name": serializers.CharField(),
                        "avatar": serializers.CharField(),
                        "platformId": serializers.CharField(),
                        "status": serializers.CharField(),
                    },
                    many=True,
                ),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        body = parse(SandboxBotsIn, request.data)
        bots = sandbox_fleet_set(merchant=self.merchant(request), status=body["status"])
        return Response(
            {
                "status": body["status"],
                "bots": [
                    {
                        "name": bot["name"],
                        "avatar": bot["avatar"],
                        "platformId": bot["platform_id"],
                        "status": bot["status"],
                    }
                    for bot in bots.values("name", "avatar", "platform_id", "status")
                ],
            }
        )


class SandboxTradeEventApi(MerchantApiView):
    operation = "sandbox"
    # PLATFORM_UNAVAILABLE: a deposit's offer_created / offer_sent the bots cannot make now.
    errors = ("TRADE_NOT_FOUND", "ITEM_NOT_FOUND", "INVALID_TRANSITION", "PLATFORM_UNAVAILABLE")

    @extend_schema(
        operation_id="sandboxTradeEvent",
        tags=["sandbox"],
        request=SandboxTradeEventIn,
        responses=TradeOut,
        parameters=[OpenApiParameter("tradeId", str, OpenApiParameter.PATH)],
    )
    def post(self, request: Request, tradeId: str) -> Response:  # noqa: N803 (the contract's name)
        body = parse(SandboxTradeEventIn, request.data)
        trade = sandbox_trade_event(
            merchant=self.merchant(request),
            trade_ref=tradeId,
            event=body["event"],
            item_ids=body.get("itemIds"),
            actor="sandbox",
        )
        return Response(trade_json(trade))


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


class SandboxDemoCallbackApi(MerchantApiView):
    """The demo merchant's receiver: verifies each signature, approves every withdrawal and
    keeps what it got. Webhooks are posted to ``?merchant=<id>`` without an API key."""

    operation = "sandbox"

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
