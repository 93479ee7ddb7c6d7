"""The ``/sandbox/`` helpers of the game platform: a platform user, the bot fleet."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.serializers import SandboxBotsIn, SandboxPlatformUserIn
from sandbox.services.platform import sandbox_fleet_set, sandbox_platform_user_set


class SandboxPlatformUserApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxPlatformUserIn
    doc = OperationDoc(
        summary="Configure a platform user in your sandbox",
        description="""
            Sets what the game platform says about one account, to test every path of trade URL
            checks, inventories and deposits: its trade URL `state` (1-10, as
            `POST /secure/check-tradeurl` answers), bans (`antiCheatBanned`, `gameBans`,
            `economyBan`), trade holds (`escrowDays`), a private inventory, its items
            (`inventory`: market hash names from the catalog, with wear, phase, amount,
            tradability) and a failure of the platform itself for it (`fault`: `unavailable`,
            `rate_limited`, `error`).

            Without it every account has state 1 and a deterministic generated inventory. The
            body replaces the account's whole configuration; your cached inventory and trade URL
            checks of that account are forgotten. Only your sandbox world sees it: other
            merchants keep the generated account.
        """,
        request=examples.PLATFORM_USER_REQUEST,
        response=examples.PLATFORM_USER,
    )

    @extend_schema(
        operation_id="sandboxSetPlatformUser",
        tags=["sandbox"],
        responses=inline_serializer(
            "SandboxPlatformUser",
            {"platformId": serializers.CharField(), "configured": serializers.BooleanField()},
        ),
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
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
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxBotsIn
    doc = OperationDoc(
        summary="Set the bot fleet's status in your sandbox",
        description="""
            Puts every bot of the service in one state, as your sandbox world sees them:
            `offline` makes inventories and deposits answer `NO_BOTS_AVAILABLE`, `degraded`
            `FLEET_DEGRADED` (with `Retry-After: 30`), and deposits already made wait for their
            trade offers (failed after 30 minutes). `online` restores the fleet. Other
            merchants' bots go on.
        """,
        request={"status": "degraded"},
        response=examples.FLEET_DEGRADED,
    )

    @extend_schema(
        operation_id="sandboxSetBots",
        tags=["sandbox"],
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
        body = self.parse_body(request)
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
