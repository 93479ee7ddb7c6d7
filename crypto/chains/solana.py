"""Real Solana over JSON-RPC (solana-py and solders) when a node is configured
(``CRYPTO_SOL_RPC_URL``): associated token accounts opened and closed by the hot wallet, which
pays their rent and every fee; cashouts as SPL ``transferChecked`` from the hot wallet's token
account, creating the recipient's when it is missing (the idempotent create), with a priority
fee; transaction states from signature statuses at the service's commitment
(CRYPTO_SOLANA_COMMITMENT, finalized by default). Deposits are found by the scanner
(``crypto.solana.scanner``), expired signings signed again by the transactions sweep
(``crypto.solana.transactions``), deposit accounts swept by ``crypto.solana.sweeps``. Every
other chain goes to the gateway it is given, else to the one ``CRYPTO_OTHER_CHAINS`` names,
else to the unconfigured one."""

import logging
from decimal import Decimal

from django.conf import settings
from solders.instruction import Instruction
from solders.pubkey import Pubkey
from spl.token.constants import TOKEN_PROGRAM_ID
from spl.token.instructions import (
    create_idempotent_associated_token_account,
    get_associated_token_address,
    transfer_checked,
)
from spl.token.models import TransferCheckedParams

from core.adapters import adapter_load
from crypto.chains import chain_gateway
from crypto.chains.base import (
    AccountState,
    BroadcastError,
    ChainError,
    ChainGateway,
    ChainStatus,
    TransferState,
    whole_units,
)
from crypto.chains.unconfigured import UnconfiguredChains
from crypto.keys import solana_hot_wallet_keypair
from crypto.models import SolanaTokenAccount
from crypto.networks import SOL, min_confirmations
from crypto.solana.models import SolanaAttempt, SolanaSweep, SolanaTransaction
from crypto.solana.node import Status, solana_node
from crypto.solana.sweeps import solana_account_close_step
from crypto.solana.transactions import (
    Plan,
    is_final,
    solana_transaction_check,
    solana_transaction_send,
    solana_transaction_sighting,
)

logger = logging.getLogger(__name__)

CASHOUT_COMPUTE_UNITS = 100_000  # idempotent create (about 25k when it creates), transfer, memo
OPEN_COMPUTE_UNITS = 60_000
SIGNATURE_FEE_LAMPORTS = 5_000  # per signature (Solana docs, "Fees")


class SolanaChains:
    def __init__(self, other: ChainGateway | None = None) -> None:
        self.chains: tuple[str, ...] = (SOL,) if settings.CRYPTO_RPC_URLS.get(SOL) else ()
        self.other: ChainGateway = other or adapter_load("CRYPTO_OTHER_CHAINS", UnconfiguredChains)

    def status(self, chain: str, *, tenant: str) -> str:
        # A halt of a real chain is the operator's call: CRYPTO_PAUSED_CHAINS.
        if chain in self.chains:
            return ChainStatus.ACTIVE
        return self.other.status(chain, tenant=tenant)

    # -- deposit token accounts

    def token_account_open(self, *, owner: str, mint: str, address: str) -> None:
        if not self.chains:
            self.other.token_account_open(owner=owner, mint=mint, address=address)
            return
        if self.token_account_state(address=address) != AccountState.MISSING:
            return
        node = solana_node()
        payer = solana_hot_wallet_keypair().pubkey()
        # The hot wallet pays the account's rent: an opening it cannot pay is not signed.
        needed = node.rent_exempt_minimum() + SIGNATURE_FEE_LAMPORTS
        held = node.lamports(str(payer))
        if held < needed:
            raise ChainError(f"the hot wallet holds {held} lamports; opening needs {needed}")
        previous = SolanaTransaction.objects.filter(
            purpose=SolanaTransaction.Purpose.OPEN, key__startswith=f"open:{address}:"
        ).count()
        instruction = create_idempotent_associated_token_account(
            payer, Pubkey.from_string(owner), Pubkey.from_string(mint)
        )
        if str(instruction.accounts[1].pubkey) != address:
            raise ChainError(f"{address} is not the associated token account of {owner}")
        solana_transaction_send(
            key=f"open:{address}:{previous + 1}",
            purpose=SolanaTransaction.Purpose.OPEN,
            build=lambda: Plan([instruction], signers=[], compute_unit_limit=OPEN_COMPUTE_UNITS),
        )

    def token_account_state(self, *, address: str) -> str:
        if not self.chains:
            return self.other.token_account_state(address=address)
        if SolanaSweep.objects.filter(
            address=address, status=SolanaSweep.Status.SWEEPING, closes=True
        ).exists():
            # Its closing sweep may land any moment: open it again once that is over.
            return AccountState.CLOSED
        if solana_node().account_owner(address) == str(TOKEN_PROGRAM_ID):
            return AccountState.OPEN
        opening = (
            SolanaTransaction.objects.filter(
                purpose=SolanaTransaction.Purpose.OPEN, key__startswith=f"open:{address}:"
            )
            .order_by("-created_at")
            .first()
        )
        if opening is not None and opening.status in SolanaTransaction.LIVE:
            # One look: an opening that landed long ago was of an account closed since.
            opening = solana_transaction_check(transaction_id=str(opening.pk)) or opening
            if opening.status in SolanaTransaction.LIVE:
                return AccountState.OPENING
        # Never asked, refused, failed, or opened and closed since: nothing is opening it.
        return AccountState.MISSING

    def token_account_close(self, *, address: str) -> str:
        if not self.chains:
            return self.other.token_account_close(address=address)
        account = SolanaTokenAccount.objects.select_related("allocation").get(address=address)
        return solana_account_close_step(account=account)

    # -- transactions

    def transfer_state(self, *, chain: str, tx_hash: str) -> TransferState | None:
        if chain not in self.chains:
            return self.other.transfer_state(chain=chain, tx_hash=tx_hash)
        try:
            ours = SolanaAttempt.objects.filter(signature=tx_hash).select_related(
                "solana_transaction"
            )
            if ours:
                seen = solana_transaction_sighting(ours[0].solana_transaction)
                return _state(seen.signature, seen.status)
            [status] = solana_node().statuses([tx_hash])
        except ChainError as exc:
            logger.warning("SOL %s: no answer from the node: %s", tx_hash, exc)
            return None  # the sweeps ask again
        return _state(tx_hash, status) if status is not None else None

    def broadcast(
        self, *, tenant: str, chain: str, contract: str, to: str, amount: Decimal, key: str
    ) -> str:
        if chain not in self.chains:
            return self.other.broadcast(
                tenant=tenant, chain=chain, contract=contract, to=to, amount=amount, key=key
            )
        units, decimals = whole_units(chain, contract, amount)
        try:
            sent = solana_transaction_send(
                key=f"cashout:{key}",
                purpose=SolanaTransaction.Purpose.CASHOUT,
                build=lambda: _cashout_plan(mint=contract, to=to, units=units, decimals=decimals),
            )
        except ChainError as exc:
            raise BroadcastError(str(exc)) from exc  # refused or never signed: nothing went out
        return sent.attempts.order_by("-id")[0].signature


def _state(signature: str, status: Status | None) -> TransferState:
    """Confirmations as the domain counts them: the chain's required number once the
    transaction is at the service's commitment, else what the cluster counts (fewer)."""
    needed = min_confirmations(SOL)
    if status is None:
        return TransferState(tx_hash=signature, confirmations=0, dropped=False)
    final = is_final(status)
    return TransferState(
        tx_hash=signature,
        confirmations=needed if final else min(needed - 1, status.confirmations or 0),
        dropped=False,  # ours are signed again, never lost; incoming ones are found finalized
        reverted=final and bool(status.error),
    )


def _cashout_plan(*, mint: str, to: str, units: int, decimals: int) -> Plan:
    """A wallet address gets the tokens in its associated token account, created when missing;
    a token account of this mint gets them directly; any other token account is refused (tokens
    sent to an account owned by a token account are lost)."""
    node = solana_node()
    hot = solana_hot_wallet_keypair().pubkey()
    mint_key = Pubkey.from_string(mint)
    recipient = Pubkey.from_string(to)
    instructions: list[Instruction] = []
    if node.account_owner(to) == str(TOKEN_PROGRAM_ID):
        if node.token_account_mint(to) != mint:
            raise BroadcastError(f"{to} is a token account of another mint")
        destination = recipient
    else:
        destination = get_associated_token_address(recipient, mint_key)
        instructions.append(create_idempotent_associated_token_account(hot, recipient, mint_key))
    instructions.append(
        transfer_checked(
            TransferCheckedParams(
                program_id=TOKEN_PROGRAM_ID,
                source=get_associated_token_address(hot, mint_key),
                mint=mint_key,
                dest=destination,
                owner=hot,
                amount=units,
                decimals=decimals,
            )
        )
    )
    return Plan(instructions, signers=[], compute_unit_limit=CASHOUT_COMPUTE_UNITS)


def solana_served() -> bool:
    """Whether this deployment serves Solana over JSON-RPC (its scanner and sweeps are idle
    otherwise)."""
    return isinstance(chain_gateway(SOL), SolanaChains)
