"""Sweeps of deposit addresses: a token balance moved to the hot wallet, every sweep recorded.

Started on a schedule (every address and token credited since its last sweep, from
CRYPTO_EVM_SWEEP_MIN_TOKENS) or by staff in the admin (any balance). An address without the gas
for the transfer gets it from the hot wallet first (``funding``); once that top-up is in a block
the address signs the transfer (``sweeping``), which completes once final. Each step is one look
at the chain, moved by the sweeps' deadline (``next_step_at``); every transaction goes through
``crypto.evm.transactions`` (nonces, resends, fee bumps). No USD moves: the tokens were credited
when they arrived."""

import logging
from datetime import timedelta
from decimal import Decimal
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Sum

from core import clock
from crypto.chains.base import ChainError
from crypto.evm.models import EvmSweep, EvmTransaction
from crypto.evm.node import CallRevertedError, erc20_transfer_data, evm_node
from crypto.evm.transactions import (
    GAS_HEADROOM,
    evm_transaction_check,
    evm_transaction_send,
    hot_wallet_address,
)
from crypto.keys import evm_hot_wallet_key, evm_private_key
from crypto.models import AddressAllocation, CryptoDeposit
from crypto.networks import network

logger = logging.getLogger(__name__)

Status = EvmSweep.Status
STEP_SECONDS = 15
TxStatus = EvmTransaction.Status


def evm_sweep_start(
    *, chain: str, allocation: AddressAllocation, token: str, trigger: str, minimum: Decimal
) -> EvmSweep | None:
    """Sweep the address's ``token`` if it holds at least ``minimum`` (and more than nothing).
    None when there is nothing to sweep or a sweep of it is under way. Network I/O first."""
    node = evm_node(chain)
    contract = network(chain).token(token)
    address = allocation.evm_address or ""
    units = node.token_balance(contract=contract.contract, address=address)
    amount = Decimal(units).scaleb(-contract.decimals)
    if units <= 0 or amount < minimum:
        return None
    data = erc20_transfer_data(to=hot_wallet_address(), value=units)
    gas = node.estimate_gas(sender=address, to=contract.contract, value=0, data=data)
    gas_needed = int(gas * GAS_HEADROOM) * node.fees().max_fee_per_gas
    native = node.balance(address)
    now = clock.now()
    try:
        with transaction.atomic():
            # The address's live sweeps share its gas: one start at a time counts what they hold.
            AddressAllocation.objects.select_for_update().get(pk=allocation.pk)
            held = EvmSweep.objects.filter(
                chain=chain, address=address, status__in=EvmSweep.LIVE
            ).aggregate(total=Sum("gas_needed"))["total"] or Decimal(0)
            shortfall = max(0, gas_needed - (native - int(held)))
            sweep = EvmSweep.objects.create(
                chain=chain,
                token=token,
                allocation=allocation,
                address=address,
                amount=amount,
                gas_needed=gas_needed,
                gas_topup=shortfall,
                status=Status.FUNDING if shortfall else Status.SWEEPING,
                trigger=trigger,
                next_step_at=now,
                created_at=now,
                updated_at=now,
            )
    except IntegrityError:
        return None  # a live sweep of this token at this address
    return evm_sweep_step(sweep_id=sweep.pk)


def evm_sweep_step(*, sweep_id: UUID | str) -> EvmSweep | None:
    """One look at a live sweep: send what it waits for, or move it on."""
    sweep = (
        EvmSweep.objects.filter(pk=sweep_id, status__in=EvmSweep.LIVE)
        .select_related("allocation", "gas_transaction", "sweep_transaction")
        .first()
    )
    if sweep is None:
        return None
    EvmSweep.objects.filter(pk=sweep.pk, next_step_at=sweep.next_step_at).update(
        next_step_at=clock.now() + timedelta(seconds=STEP_SECONDS)
    )
    try:
        if sweep.status == Status.FUNDING:
            _fund(sweep)
        else:
            _transfer(sweep)
    except CallRevertedError as exc:
        _finish(sweep, Status.FAILED, reason=str(exc))
    except ChainError as exc:
        logger.warning("sweep %s waits: %s", sweep.pk, exc)
    sweep.refresh_from_db()
    return sweep


def _settled(chain_tx: EvmTransaction) -> EvmTransaction:
    """The transaction after one more look at the chain (if it is still live)."""
    return evm_transaction_check(transaction_id=str(chain_tx.pk)) or chain_tx


def _fund(sweep: EvmSweep) -> None:
    if sweep.gas_transaction is None:
        sent = evm_transaction_send(
            chain=sweep.chain,
            key=f"sweep-gas:{sweep.pk}",
            purpose=EvmTransaction.Purpose.GAS,
            sender_key=evm_hot_wallet_key(),
            to=sweep.address,
            value=int(sweep.gas_topup),
        )
        EvmSweep.objects.filter(pk=sweep.pk, gas_transaction=None).update(
            gas_transaction=sent, updated_at=clock.now()
        )
        return
    topup = _settled(sweep.gas_transaction)
    if topup.status == TxStatus.DROPPED or topup.succeeded is False:
        _finish(sweep, Status.FAILED, reason="the gas top-up did not go through")
    elif topup.status in (TxStatus.MINED, TxStatus.CONFIRMED):
        if not _gas_enough(sweep):
            # Fees rose past the top-up: the next plan starts again from what the address holds.
            _finish(sweep, Status.FAILED, reason="fees rose past the gas top-up")
            return
        EvmSweep.objects.filter(pk=sweep.pk, status=Status.FUNDING).update(
            status=Status.SWEEPING, updated_at=clock.now()
        )
        sweep.status = Status.SWEEPING
        _transfer(sweep)


def _gas_enough(sweep: EvmSweep) -> bool:
    """The address can pay its transfer at the fees of now (network I/O)."""
    node = evm_node(sweep.chain)
    token = network(sweep.chain).token(sweep.token)
    data = erc20_transfer_data(
        to=hot_wallet_address(), value=int(sweep.amount.scaleb(token.decimals))
    )
    gas = node.estimate_gas(sender=sweep.address, to=token.contract, value=0, data=data)
    return node.balance(sweep.address) >= int(gas * GAS_HEADROOM) * node.fees().max_fee_per_gas


def _transfer(sweep: EvmSweep) -> None:
    if sweep.sweep_transaction is None:
        token = network(sweep.chain).token(sweep.token)
        sent = evm_transaction_send(
            chain=sweep.chain,
            key=f"sweep:{sweep.pk}",
            purpose=EvmTransaction.Purpose.SWEEP,
            sender_key=evm_private_key(sweep.allocation_id),
            to=token.contract,
            data=erc20_transfer_data(
                to=hot_wallet_address(), value=int(sweep.amount.scaleb(token.decimals))
            ),
        )
        EvmSweep.objects.filter(pk=sweep.pk, sweep_transaction=None).update(
            sweep_transaction=sent, updated_at=clock.now()
        )
        return
    moved = _settled(sweep.sweep_transaction)
    if moved.status == TxStatus.DROPPED:
        _finish(sweep, Status.FAILED, reason="its nonce went to another transaction")
    elif moved.status == TxStatus.CONFIRMED:
        if moved.succeeded:
            _finish(sweep, Status.COMPLETED, tx_hash=moved.mined_hash)
        else:
            _finish(sweep, Status.FAILED, reason="the transfer reverted", tx_hash=moved.mined_hash)


def _finish(sweep: EvmSweep, status: str, *, reason: str = "", tx_hash: str = "") -> None:
    now = clock.now()
    EvmSweep.objects.filter(pk=sweep.pk, status__in=EvmSweep.LIVE).update(
        status=status,
        reason=reason[:200],
        tx_hash=tx_hash,
        next_step_at=None,
        updated_at=now,
        completed_at=now if status == Status.COMPLETED else None,
    )


def evm_sweeps_advance() -> int:
    """One step of every live sweep whose deadline came; returns how many."""
    rows = EvmSweep.objects.filter(
        status__in=EvmSweep.LIVE, next_step_at__lte=clock.now()
    ).order_by("next_step_at")
    due = list(rows.values_list("id", flat=True)[:500])
    for sweep_id in due:
        evm_sweep_step(sweep_id=sweep_id)
    return len(due)


def evm_sweeps_plan(*, chains: tuple[str, ...]) -> int:
    return sum(_plan(chain) for chain in chains)


def _plan(chain: str) -> int:
    """The schedule: every address and token credited since its last sweep (live or completed)
    with at least CRYPTO_EVM_SWEEP_MIN_TOKENS. Returns how many sweeps started."""
    swept_since = EvmSweep.objects.filter(
        allocation=OuterRef("allocation"),
        chain=chain,
        token=OuterRef("token"),
        status__in=[*EvmSweep.LIVE, Status.COMPLETED],
        created_at__gte=OuterRef("completed_at"),
    )
    pending = (
        CryptoDeposit.objects.filter(chain=chain, status=CryptoDeposit.Status.COMPLETED)
        .exclude(Exists(swept_since))
        .values_list("allocation_id", "token")
        .distinct()[:500]
    )
    started = 0
    minimum = Decimal(settings.CRYPTO_EVM_SWEEP_MIN_TOKENS)
    for allocation_id, token in pending:
        allocation = AddressAllocation.objects.get(pk=allocation_id)
        sweep = _start_or_skip(chain, allocation, token, EvmSweep.Trigger.SCHEDULE, minimum)
        started += sweep is not None
    return started


def evm_sweeps_request(*, allocation_id: int, chains: tuple[str, ...]) -> list[EvmSweep]:
    """Staff ask for an address to be swept now: every token it holds on these chains."""
    allocation = AddressAllocation.objects.get(pk=allocation_id)
    started = []
    for chain in chains:
        for token in network(chain).tokens:
            sweep = _start_or_skip(chain, allocation, token, EvmSweep.Trigger.STAFF, Decimal(0))
            if sweep is not None:
                started.append(sweep)
    return started


def _start_or_skip(
    chain: str, allocation: AddressAllocation, token: str, trigger: str, minimum: Decimal
) -> EvmSweep | None:
    """``evm_sweep_start``, or None when the chain failed it (logged): one address's or
    token's error never stops the others."""
    try:
        return evm_sweep_start(
            chain=chain, allocation=allocation, token=token, trigger=trigger, minimum=minimum
        )
    except ChainError as exc:
        logger.warning("sweep of %s %s on %s not started: %s", allocation, token, chain, exc)
        return None
