"""The chains: their status, Solana token accounts, observed transfers and broadcasts.

One gateway serves ETH, BSC and SOL. Every method is network I/O: call it outside transactions.
Calls whose answer the sandbox keeps per merchant name their ``tenant`` (the merchant's id): the
real chains are one world and ignore it.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from django.db.models import QuerySet

from crypto.models import AddressAllocation
from crypto.networks import network

logger = logging.getLogger(__name__)


class ChainError(Exception):
    """The chain (or its node) could not do what was asked; retry later."""


class BroadcastError(ChainError):
    """A transaction was refused or could not be sent; nothing went out."""


def whole_units(chain: str, contract: str, amount: Decimal) -> tuple[int, int]:
    """``amount`` of the chain's token at ``contract`` in its smallest units, and the token's
    decimals. BroadcastError unless that is a positive whole number of units."""
    decimals = next(t.decimals for t in network(chain).tokens.values() if t.contract == contract)
    units = amount.scaleb(decimals)
    if units != units.to_integral_value() or units <= 0:
        raise BroadcastError(f"{amount} is not a positive amount of whole token units")
    return int(units), decimals


def transactions_check(due: QuerySet[Any], check: Callable[[str], object]) -> int:
    """Look at the first 500 ``due`` transactions (live, their deadline come), soonest first;
    one the chain cannot answer for waits for the next run (logged). Returns how many were
    looked at."""
    ids = [str(pk) for pk in due.order_by("next_check_at").values_list("id", flat=True)[:500]]
    for transaction_id in ids:
        try:
            check(transaction_id)
        except ChainError as exc:
            logger.warning("transaction %s not checked: %s", transaction_id, exc)
    return len(ids)


class ChainStatus:
    ACTIVE = "active"
    PAUSED = "paused"  # halted or in maintenance: no credits, no broadcasts until it resumes


class AccountState:
    MISSING = "missing"
    OPENING = "opening"
    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True)
class DepositTarget:
    """Whose deposit address a transfer landed on."""

    allocation: AddressAllocation
    address: str  # the address shown to the user
    token_account: str  # Solana: the token's account; else ""


class DepositObserver(Protocol):
    """What a scanner hands each transfer it finds to (the deposit service's
    ``crypto_deposit_observe``, given by whoever runs the scan): idempotent per transfer."""

    def __call__(
        self,
        *,
        chain: str,
        token: str,
        target: DepositTarget,
        tx_hash: str,
        from_address: str,
        amount_crypto: Decimal,
        confirmations: int,
        event_index: int,
    ) -> object: ...


@dataclass(frozen=True)
class TransferState:
    """What the chain says of one transaction now."""

    tx_hash: str  # the one asked about, or the replacement (same nonce, higher fees) that counts
    confirmations: int
    dropped: bool  # reorganised away or never mined: it will not confirm
    reverted: bool = False  # mined, but its call failed: nothing was transferred


class ChainGateway(Protocol):
    def status(self, chain: str, *, tenant: str) -> str:
        """ChainStatus.ACTIVE or PAUSED. Raises ChainError when the chain cannot be asked."""

    def token_account_open(self, *, owner: str, mint: str, address: str) -> None:
        """Ask for a Solana associated token account to be created (idempotent: asked again
        while it is opening, nothing new happens)."""

    def token_account_state(self, *, address: str) -> str:
        """An AccountState value: MISSING (or CLOSED) when nothing is opening it now, so the
        caller asks for it to be opened again."""

    def token_account_close(self, *, address: str) -> str:
        """Sweep an emptied Solana token account to the treasury and close it (rent back). The
        account's AccountState: CLOSED once the chain closed it; anything else, the closing is
        under way and the caller asks again later."""

    def transfer_state(self, *, chain: str, tx_hash: str) -> TransferState | None:
        """None when the chain does not know the transaction, or cannot tell now (its node does
        not answer): the caller changes nothing and asks again later."""

    def broadcast(
        self, *, tenant: str, chain: str, contract: str, to: str, amount: Decimal, key: str
    ) -> str:
        """Send ``amount`` (token units) of the token at ``contract`` to ``to`` from the hot
        wallet; returns the transaction hash. The same ``key`` always gives the same
        transaction, so a retried worker never pays twice. Raises BroadcastError."""
