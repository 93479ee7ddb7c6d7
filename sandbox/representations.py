"""Shapes of the ``/sandbox/`` helpers' answers (one description: the views build them, the
OpenAPI document is generated from them)."""

from typing import Annotated, Any, Literal, TypedDict, cast

from django.conf import settings

from core.shapes import Doc
from crypto.networks import CHAINS
from crypto.representations import Chain, DepositOut, WithdrawalOut


class SandboxTransferOut(TypedDict):
    txHash: str
    chain: Chain
    confirmations: int
    dropped: bool
    deposit: DepositOut | None
    withdrawal: WithdrawalOut | None


class SandboxChainOut(TypedDict):
    chain: Chain
    paused: bool
    failBroadcasts: bool


class SandboxIdentityProviderOut(TypedDict):
    status: Literal["online", "offline"]


class SandboxAutopilotOut(TypedDict):
    enabled: Annotated[bool, Doc("whether the autopilot moves your trades and transactions")]
    stepSeconds: Annotated[
        int,
        Doc("idle seconds before the world moves an item (SANDBOX_AUTOPILOT_SECONDS); 0: never"),
    ]


class SandboxResetOut(TypedDict):
    platformUsersForgotten: Annotated[int, Doc("configured platform users now generated again")]
    bots: Literal["online"]
    identityProvider: Literal["online"]
    chains: list[SandboxChainOut]
    autopilot: SandboxAutopilotOut


def autopilot_json(*, enabled: bool) -> SandboxAutopilotOut:
    return {"enabled": enabled, "stepSeconds": settings.SANDBOX_AUTOPILOT_SECONDS}


def reset_json(*, platform_users_forgotten: int) -> SandboxResetOut:
    """The merchant's world as a reset leaves it."""
    return {
        "platformUsersForgotten": platform_users_forgotten,
        "bots": "online",
        "identityProvider": "online",
        "chains": [
            {"chain": cast(Chain, chain), "paused": False, "failBroadcasts": False}
            for chain in CHAINS
        ],
        "autopilot": autopilot_json(enabled=True),
    }


class SandboxWebhookTestOut(TypedDict):
    webhookId: Annotated[
        str,
        Doc(
            "Its `webhook-id` header: the event's `id` (new each time), `test_...` for the URL test"
        ),
    ]
    type: Annotated[str, Doc("The event type sent")]
    url: Annotated[str, Doc("Where it was posted")]
    statusCode: Annotated[
        int | None, Doc("Your receiver's HTTP status; null when it gave no answer (see error)")
    ]
    answer: Annotated[str, Doc("The start of your receiver's answer (500 characters at most)")]
    latencyMs: int
    error: Annotated[
        str | None, Doc("Why there was no answer (connection refused, timeout, ...); else null")
    ]
    payload: Annotated[
        dict[str, Any],
        Doc("The body posted: the event as a real one is, with `test: true`"),
    ]
