"""Shapes of the ``/sandbox/`` helpers' answers (one description: the views build them, the
OpenAPI document is generated from them)."""

from typing import Literal, TypedDict

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
