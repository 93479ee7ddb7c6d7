"""Shapes of the ``/sandbox/crypto/`` helpers' answers (they move with the sandbox; the crypto
endpoints' own shapes are in representations.py)."""

from typing import TypedDict

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
