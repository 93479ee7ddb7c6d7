"""Crypto deposits: transfers observed on users' addresses, credited 1:1 in USD once confirmed.

pending -> completed (enough confirmations, chain not paused: credit), -> frozen (above the
merchant's review threshold or from a flagged sender; staff release -> completed or refund ->
refunded), -> failed (reorganised away or dropped). Below the chain's minimum: below_minimum at
once, never credited. Each change emits ``crypto_deposit.<status>`` and moves its funding.
"""

import re
from decimal import ROUND_DOWN, Decimal
from uuid import UUID

from django.db import IntegrityError, transaction
from eth_utils import to_checksum_address

from core.errors import DomainError
from crypto.chains import get_chains
from crypto.chains.base import DepositTarget
from crypto.models import AddressAllocation, CryptoDeposit, FlaggedAddress, SolanaTokenAccount
from crypto.networks import EVM_CHAINS, min_confirmations, min_deposit_cents
from crypto.services.addresses import solana_account_close_if_emptied, solana_account_reclose
from crypto.services.common import (
    chain_paused,
    deposit_emit,
    deposit_review_above_cents,
    now_ms,
    rows_refresh,
)
from ledger.models import USD_PER_TOKEN, Funding
from ledger.services import funding_record, funding_status_set
from wallet.services import wallet_crypto_credit

CENT = Decimal("0.01")
MICRO = Decimal("0.000001")
EVM_HEX = re.compile(r"^0x[0-9a-fA-F]{40}\Z")
Status = CryptoDeposit.Status
FUNDING_STATUS = {
    Status.PENDING: Funding.Status.PENDING,
    Status.COMPLETED: Funding.Status.COMPLETED,
    Status.FROZEN: Funding.Status.PENDING_ADMIN,
    Status.REFUNDED: Funding.Status.REFUNDED,
    Status.FAILED: Funding.Status.FAILED,
}


class UnknownAddressError(Exception):
    """No user of the service owns this address."""


class AccountNotOpenError(Exception):
    """The Solana token account the transfer needs is not open: the chain refuses it."""

    def __init__(self, allocation: AddressAllocation) -> None:
        super().__init__(allocation.solana_owner)
        self.allocation = allocation


def deposit_target(*, chain: str, token: str, address: str) -> DepositTarget:
    """Whose address this is. On Solana a transfer lands in the token's account, which must be
    open; the owner address and the account address both name it."""
    if chain in EVM_CHAINS:
        if not EVM_HEX.match(address):
            raise UnknownAddressError(address)
        allocation = AddressAllocation.objects.filter(
            evm_address=to_checksum_address(address)
        ).first()
        if allocation is None:
            raise UnknownAddressError(address)
        return DepositTarget(allocation, allocation.evm_address or "", "")
    account = (
        SolanaTokenAccount.objects.filter(token=token, allocation__solana_owner=address)
        .select_related("allocation")
        .first()
    ) or (
        SolanaTokenAccount.objects.filter(token=token, address=address)
        .select_related("allocation")
        .first()
    )
    if account is None:
        owner = AddressAllocation.objects.filter(solana_owner=address).first()
        if owner is not None:
            raise AccountNotOpenError(owner)
        raise UnknownAddressError(address)
    if account.status != SolanaTokenAccount.Status.ACTIVE:
        raise AccountNotOpenError(account.allocation)
    return DepositTarget(account.allocation, account.allocation.solana_owner or "", account.address)


def _funding_status(deposit: CryptoDeposit) -> None:
    funding_status_set(
        source_type="crypto_deposit",
        source_id=str(deposit.id),
        type=Funding.Type.DEPOSIT,
        status=FUNDING_STATUS[Status(deposit.status)],
    )


def _move(deposit: CryptoDeposit, status: str) -> None:
    deposit.status = status
    deposit.updated_at = now_ms()
    if status == Status.COMPLETED:
        deposit.completed_at = deposit.updated_at
    _funding_status(deposit)
    deposit_emit(deposit)


def _credit(deposit: CryptoDeposit) -> None:
    wallet_crypto_credit(
        merchant=deposit.merchant, amount=deposit.amount_usd, cause_id=str(deposit.id)
    )
    _move(deposit, Status.COMPLETED)
    solana_account_close_if_emptied(deposit=deposit)


def _review_reason(deposit: CryptoDeposit) -> str:
    if deposit.amount_cents > deposit_review_above_cents(deposit.merchant_id):
        return "ABOVE_REVIEW_THRESHOLD"
    if (
        deposit.from_address
        and FlaggedAddress.objects.filter(address__iexact=deposit.from_address).exists()
    ):
        return "FLAGGED_SENDER"
    return ""


def _advance(deposit: CryptoDeposit, *, confirmations: int, dropped: bool, paused: bool) -> None:
    """Apply what the chain says now to a locked deposit."""
    changed = confirmations > deposit.confirmations
    deposit.confirmations = max(deposit.confirmations, confirmations)
    if deposit.status != Status.PENDING:
        if changed:
            deposit.save(update_fields=["confirmations"])
        return
    if dropped:
        _move(deposit, Status.FAILED)
    elif deposit.confirmations >= min_confirmations(deposit.chain) and not paused:
        reason = _review_reason(deposit)
        if reason:
            deposit.review_reason = reason
            _move(deposit, Status.FROZEN)
        else:
            _credit(deposit)
    elif changed:
        deposit.updated_at = now_ms()
        deposit.save(update_fields=["confirmations", "updated_at"])


def _lock(**lookup: object) -> CryptoDeposit | None:
    return (
        CryptoDeposit.objects.select_for_update(of=("self",), no_key=True)
        .select_related("merchant")
        .filter(**lookup)
        .first()
    )


def _create(
    *,
    chain: str,
    token: str,
    target: DepositTarget,
    tx_hash: str,
    event_index: int,
    from_address: str,
    amount_crypto: Decimal,
) -> CryptoDeposit:
    now = now_ms()
    amount_usd = (amount_crypto * USD_PER_TOKEN).quantize(CENT, rounding=ROUND_DOWN)
    below = int(amount_usd * 100) < max(1, min_deposit_cents(chain))
    allocation = target.allocation
    deposit = CryptoDeposit.objects.create(
        merchant=allocation.merchant,
        allocation=allocation,
        platform_id=allocation.platform_id,
        chain=chain,
        token=token,
        address=target.address,
        token_account=target.token_account,
        tx_hash=tx_hash,
        event_index=event_index,
        from_address=from_address,
        amount_crypto=amount_crypto,
        amount_usd=amount_usd,
        status=Status.BELOW_MINIMUM if below else Status.PENDING,
        created_at=now,
        updated_at=now,
    )
    if not below:
        funding_record(
            merchant=allocation.merchant,
            type=Funding.Type.DEPOSIT,
            status=Funding.Status.PENDING,
            amount_usd=amount_usd,
            source_type="crypto_deposit",
            source_id=str(deposit.id),
            amount_crypto=amount_crypto.quantize(MICRO, rounding=ROUND_DOWN),
            token=token,
            chain=chain,
            address=target.address,
            txn_hash=tx_hash,
            created_at=now,
        )
    deposit_emit(deposit)
    return deposit


def crypto_deposit_observe(
    *,
    chain: str,
    token: str,
    target: DepositTarget,
    tx_hash: str,
    from_address: str,
    amount_crypto: Decimal,
    confirmations: int,
    dropped: bool = False,
    event_index: int = 0,
) -> CryptoDeposit:
    """A transfer to a user's address as the chain reports it (again and again: idempotent per
    transfer, the ``event_index``-th of its transaction). Network I/O first, then one
    transaction."""
    paused = chain_paused(chain, merchant_id=target.allocation.merchant_id)
    transfer = {"chain": chain, "tx_hash": tx_hash, "event_index": event_index}
    with transaction.atomic():
        deposit = _lock(**transfer)
        if deposit is None:
            try:
                with transaction.atomic():
                    deposit = _create(
                        chain=chain,
                        token=token,
                        target=target,
                        tx_hash=tx_hash,
                        event_index=event_index,
                        from_address=from_address,
                        amount_crypto=amount_crypto,
                    )
                    solana_account_reclose(deposit=deposit)
            except IntegrityError:
                deposit = _lock(**transfer)  # a twin observer created it
            assert deposit is not None
        _advance(deposit, confirmations=confirmations, dropped=dropped, paused=paused)
    return deposit


def crypto_deposit_refresh(
    *, deposit_id: UUID | str, paused: bool | None = None
) -> CryptoDeposit | None:
    """Ask the chain about a pending deposit and apply its answer. Network I/O first."""
    deposit = CryptoDeposit.objects.filter(pk=deposit_id, status=Status.PENDING).first()
    if deposit is None:
        return None
    state = get_chains().transfer_state(chain=deposit.chain, tx_hash=deposit.tx_hash)
    if state is None:
        return deposit
    is_paused = (
        chain_paused(deposit.chain, merchant_id=deposit.merchant_id) if paused is None else paused
    )
    with transaction.atomic():
        locked = _lock(pk=deposit_id)
        if locked is not None:
            _advance(
                locked, confirmations=state.confirmations, dropped=state.dropped, paused=is_paused
            )
    return locked


def crypto_deposits_sweep() -> int:
    """Every pending deposit, as the chain sees it now; returns how many were looked at.
    Confirmations arrive here in production (and with the sandbox autopilot). A chain that
    cannot be asked waits."""
    pending = CryptoDeposit.objects.filter(status=Status.PENDING).values_list(
        "id", "merchant_id", "chain"
    )[:500]
    rows_refresh(pending, lambda pk, paused: crypto_deposit_refresh(deposit_id=pk, paused=paused))
    return len(pending)


def _frozen(deposit_id: str) -> CryptoDeposit:
    deposit = _lock(pk=deposit_id)
    if deposit is None:
        raise DomainError("TRANSACTION_NOT_FOUND")
    if deposit.status != Status.FROZEN:
        raise DomainError("INVALID_TRANSITION", f"The deposit is {deposit.status}, not frozen.")
    return deposit


def crypto_deposit_release(*, deposit_id: str) -> CryptoDeposit:
    """Staff release a frozen deposit: it is credited now."""
    with transaction.atomic():
        deposit = _frozen(deposit_id)
        _credit(deposit)
    return deposit


def crypto_deposit_refund(*, deposit_id: str) -> CryptoDeposit:
    """Staff refuse a frozen deposit: never credited; the tokens go back to the sender."""
    with transaction.atomic():
        deposit = _frozen(deposit_id)
        _move(deposit, Status.REFUNDED)
    return deposit
