"""Sandbox helpers that drive the simulated world (present only when SANDBOX is true)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from config.api.views import MerchantApiView
from trading.sandbox.services import sandbox_fleet_set, sandbox_platform_user_set
from trading.serializers import SandboxBotsIn, SandboxPlatformUserIn


class SandboxPlatformUserApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxSetPlatformUser",
        tags=["sandbox"],
        request=SandboxPlatformUserIn,
        responses=inline_serializer(
            "SandboxPlatformUser",
            {"platformId": serializers.CharField(), "configured": serializers.BooleanField()},
        ),
    )
    def post(self, request: Request) -> Response:
        body = parse(SandboxPlatformUserIn, request.data)
        user = sandbox_platform_user_set(
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
        bots = sandbox_fleet_set(status=body["status"])
        return Response(
            {
                "status": body["status"],
                "bots": [
                    {
                        "name": b.name,
                        "avatar": b.avatar,
                        "platformId": b.platform_id,
                        "status": b.status,
                    }
                    for b in bots
                ],
            }
        )
