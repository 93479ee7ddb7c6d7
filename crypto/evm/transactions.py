"""Transactions the service signs on EVM chains: a nonce per sender taken under that sender's row
lock (two workers never share one), the signed transaction stored before it is sent (so a lost
answer never signs a second one), sent again while no node has it, replaced at higher fees with
the same nonce while it stays out of blocks, and tracked until final.

Network I/O happens before or after the database transactions, never inside one."""

import logging
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from eth_account import Account

from core import clock
from crypto.chains.base import ChainError, transactions_check
from crypto.evm.models import EvmAttempt, EvmSender, EvmTransaction
from crypto.evm.node import Fees, Node, evm_node
from crypto.keys import evm_hot_wallet_key, evm_private_key
from crypto.models import AddressAllocation
from crypto.networks import min_confirmations

logger = logging.getLogger(__name__)

Status = EvmTransaction.Status
CHECK_SECONDS = 15  # service-clock seconds between two looks at a live transaction
GAS_HEADROOM = 1.2  # the estimate is for the state now; the block's may cost a little more


@dataclass(frozen=True)
class Sighting:
    """Where the chain has one of our transactions now."""

    tx_hash: str  # the attempt in a block, else the latest one
    block_number: int | None
    confirmations: int
    succeeded: bool | None
    dropped: bool  # final: its nonce went to a transaction that is not one of ours


def hot_wallet_address() -> str:
    return str(Account.from_key(evm_hot_wallet_key()).address)


def _signing_key(chain_tx: EvmTransaction) -> bytes:
    """The hot wallet's key, or the HD key of the deposit address being swept."""
    if chain_tx.sender == hot_wallet_address():
        return evm_hot_wallet_key()
    allocation = AddressAllocation.objects.get(evm_address=chain_tx.sender)
    return evm_private_key(allocation.pk)


def _bumped(fees: Fees, last: EvmAttempt) -> Fees:
    """At least 12.5 % over the last attempt (nodes replace a transaction from 10 %), and never
    below what the chain asks now."""

    def raised(value: Decimal) -> int:
        return (int(value) * 9 + 7) // 8

    tip = max(fees.max_priority_fee_per_gas, raised(last.max_priority_fee_per_gas))
    return Fees(
        max_fee_per_gas=max(fees.max_fee_per_gas, raised(last.max_fee_per_gas), tip),
        max_priority_fee_per_gas=tip,
    )


def _attempt(chain_tx: EvmTransaction, fees: Fees, chain_id: int) -> EvmAttempt:
    """Sign the transaction at these fees and store the attempt (in the caller's transaction)."""
    signed = Account.sign_transaction(
        {
            "type": 2,
            "chainId": chain_id,
            "nonce": chain_tx.nonce,
            "to": chain_tx.to,
            "value": int(chain_tx.value),
            "data": chain_tx.data,
            "gas": chain_tx.gas,
            "maxFeePerGas": fees.max_fee_per_gas,
            "maxPriorityFeePerGas": fees.max_priority_fee_per_gas,
        },
        _signing_key(chain_tx),
    )
    return EvmAttempt.objects.create(
        evm_transaction=chain_tx,
        tx_hash="0x" + bytes(signed.hash).hex(),
        max_fee_per_gas=fees.max_fee_per_gas,
        max_priority_fee_per_gas=fees.max_priority_fee_per_gas,
        raw="0x" + bytes(signed.raw_transaction).hex(),
        created_at=clock.real_now(),  # the fee bump measures its wait for a block in real time
    )


def _latest(chain_tx: EvmTransaction) -> EvmAttempt:
    return chain_tx.attempts.order_by("-id")[0]


def _send(node: Node, attempt: EvmAttempt) -> None:
    """Hand the attempt to the node. A refusal is only logged: the transaction is signed and
    kept, and the sweep sends it again (or bumps it) until it is in a block."""
    try:
        node.send_raw(attempt.raw)
    except ChainError as exc:
        # "already known" and "nonce too low" (it is in a block) end here as well.
        logger.info("sending %s: %s", attempt.tx_hash, exc)


def evm_transaction_send(
    *,
    chain: str,
    key: str,
    purpose: str,
    sender_key: bytes,
    to: str,
    data: str = "0x",
    value: int = 0,
) -> EvmTransaction:
    """The transaction of ``key``: signed once, with the next nonce of its sender, and sent.
    Raises ChainError (CallRevertedError when the call would fail) only before signing, when
    nothing went out; once signed, the same ``key`` always gives this transaction back."""
    existing = EvmTransaction.objects.filter(key=key).first()
    try:
        node = evm_node(chain)
    except ChainError as exc:
        if existing is None:
            raise
        # Signed already: it stands, and the transactions sweep sends it once the node answers.
        logger.info("%s not sent again now: %s", existing, exc)
        return existing
    if existing is None:
        sender = str(Account.from_key(sender_key).address)
        gas = node.estimate_gas(sender=sender, to=to, value=value, data=data)
        fees = node.fees()
        chain_nonce = node.nonce(sender)
        chain_id = node.chain_id()
        existing = _sign_new(
            chain=chain,
            key=key,
            purpose=purpose,
            sender=sender,
            to=to,
            data=data,
            value=value,
            gas=int(gas * GAS_HEADROOM),
            fees=fees,
            chain_nonce=chain_nonce,
            chain_id=chain_id,
        )
    _send(node, _latest(existing))
    return existing


def _sign_new(
    *,
    chain: str,
    key: str,
    purpose: str,
    sender: str,
    to: str,
    data: str,
    value: int,
    gas: int,
    fees: Fees,
    chain_nonce: int,
    chain_id: int,
) -> EvmTransaction:
    now = clock.now()
    with transaction.atomic():
        EvmSender.objects.get_or_create(
            chain=chain, address=sender, defaults={"next_nonce": chain_nonce}
        )
        row = EvmSender.objects.select_for_update().get(chain=chain, address=sender)
        twin = EvmTransaction.objects.filter(key=key).first()
        if twin is not None:
            return twin  # a twin worker signed it while this one asked the node
        # The node's count wins when someone else sent from this address meanwhile.
        nonce = max(row.next_nonce, chain_nonce)
        row.next_nonce = nonce + 1
        row.save(update_fields=["next_nonce"])
        chain_tx = EvmTransaction.objects.create(
            key=key,
            purpose=purpose,
            chain=chain,
            sender=sender,
            nonce=nonce,
            to=to,
            value=value,
            data=data,
            gas=gas,
            status=Status.PENDING,
            next_check_at=now + timedelta(seconds=CHECK_SECONDS),
            created_at=now,
            updated_at=now,
        )
        _attempt(chain_tx, fees, chain_id)
    return chain_tx


def evm_transaction_sighting(chain_tx: EvmTransaction, *, node: Node | None = None) -> Sighting:
    """Where the chain has the transaction now: the attempt in a block with its confirmations,
    or none, and whether its nonce was taken for good by a transaction not ours. Network I/O."""
    node = node or evm_node(chain_tx.chain)
    head = node.head()
    attempts = list(chain_tx.attempts.order_by("-id"))
    for attempt in attempts:
        receipt = node.receipt(attempt.tx_hash)
        if receipt is not None:
            return Sighting(
                tx_hash=attempt.tx_hash,
                block_number=receipt.block_number,
                confirmations=max(0, head - receipt.block_number + 1),
                succeeded=receipt.succeeded,
                dropped=False,
            )
    settled = head - min_confirmations(chain_tx.chain) + 1
    dropped = settled >= 0 and node.nonce(chain_tx.sender, at=settled) > chain_tx.nonce
    return Sighting(
        tx_hash=attempts[0].tx_hash,
        block_number=None,
        confirmations=0,
        succeeded=None,
        dropped=dropped,
    )


def evm_transaction_check(*, transaction_id: str) -> EvmTransaction | None:
    """One look at a live transaction: record where the chain has it; out of blocks, send it
    again, or replace it at higher fees once it waited CRYPTO_EVM_FEE_BUMP_SECONDS."""
    chain_tx = EvmTransaction.objects.filter(
        pk=transaction_id, status__in=EvmTransaction.LIVE
    ).first()
    if chain_tx is None:
        return None
    node = evm_node(chain_tx.chain)
    seen = evm_transaction_sighting(chain_tx, node=node)
    now = clock.now()
    due = now + timedelta(seconds=CHECK_SECONDS)
    if seen.block_number is not None:
        final = seen.confirmations >= min_confirmations(chain_tx.chain)
        _record(
            chain_tx,
            status=Status.CONFIRMED if final else Status.MINED,
            mined_hash=seen.tx_hash,
            block_number=seen.block_number,
            succeeded=seen.succeeded,
            next_check_at=None if final else due,
        )
    elif seen.dropped:
        logger.error("%s: nonce %s went to another transaction", chain_tx, chain_tx.nonce)
        _record(chain_tx, status=Status.DROPPED, next_check_at=None)
    else:
        latest = _latest(chain_tx)
        # The chain's blocks come in real time: the sandbox clock never bumps fees (gas) early.
        waited = clock.real_now() - latest.created_at
        if waited >= timedelta(seconds=settings.CRYPTO_EVM_FEE_BUMP_SECONDS):
            latest = _bump(chain_tx, latest, node.fees(), node.chain_id()) or latest
        # Out of every block (never arrived, dropped by the pool, reorganised away): again.
        _record(
            chain_tx,
            status=Status.PENDING,
            mined_hash="",
            block_number=None,
            succeeded=None,
            next_check_at=due,
        )
        _send(node, latest)
    chain_tx.refresh_from_db()
    return chain_tx


def _record(chain_tx: EvmTransaction, **fields: object) -> None:
    EvmTransaction.objects.filter(pk=chain_tx.pk, status__in=EvmTransaction.LIVE).update(
        updated_at=clock.now(), **fields
    )


def _bump(
    chain_tx: EvmTransaction, last: EvmAttempt, fees: Fees, chain_id: int
) -> EvmAttempt | None:
    """A replacement at higher fees, unless a twin sweep bumped it first."""
    with transaction.atomic():
        locked = (
            EvmTransaction.objects.select_for_update()
            .filter(pk=chain_tx.pk, status__in=EvmTransaction.LIVE)
            .first()
        )
        if locked is None or _latest(locked).pk != last.pk:
            return None
        attempt = _attempt(locked, _bumped(fees, last), chain_id)
    logger.info("%s: fees bumped, %s replaces %s", chain_tx, attempt.tx_hash, last.tx_hash)
    return attempt


def evm_transactions_sweep() -> int:
    """Look at every live transaction whose deadline came; returns how many were looked at."""
    due = EvmTransaction.objects.filter(
        status__in=EvmTransaction.LIVE, next_check_at__lte=clock.now()
    )
    return transactions_check(due, lambda pk: evm_transaction_check(transaction_id=pk))
