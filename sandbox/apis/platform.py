"""The ``/sandbox/`` helpers of the game platform: a platform user, the bot fleet."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.views import MerchantApiView
from sandbox.serializers import SandboxBotsIn, SandboxPlatformUserIn
from sandbox.services.platform import sandbox_fleet_set, sandbox_platform_user_set


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
