"""Transactions the service signs on Solana: the hot wallet pays (and signs), deposit owners
sign what moves their tokens. A transaction is stored with its first signing before it is sent
(so a lost answer or a twin worker never signs a second one), sent again as it is while its
blockhash is valid, and signed again with a new blockhash (and a higher priority fee) only once
the last signing can no longer land: the finalized block height is past its
``lastValidBlockHeight`` and the cluster has none of its signatures. A signing the node refused
(preflight, signatures) was not forwarded; the owner may ask for it to be signed again.

Every transaction carries a memo of its key, so two alike (two cashouts of the same amount to
the same address in the same block) never share a signature. Network I/O happens before or after
the database transactions, never inside one (Solana docs, "Retrying Transactions" and
"Transaction Confirmation & Expiration")."""

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from spl.memo.constants import MEMO_PROGRAM_ID
from spl.memo.instructions import create_memo
from spl.memo.models import MemoParams

from core import clock
from crypto.chains.base import ChainError, transactions_check
from crypto.keys import solana_hot_wallet_keypair, solana_keypair
from crypto.solana.models import SolanaAttempt, SolanaTransaction
from crypto.solana.node import SendRefusedError, SolanaNode, Status, solana_node

logger = logging.getLogger(__name__)

TxStatus = SolanaTransaction.Status
CHECK_SECONDS = 10  # service-clock seconds between two looks at a live transaction
COMMITMENT_RANK = {"processed": 0, "confirmed": 1, "finalized": 2}


@dataclass(frozen=True)
class Plan:
    """What a new transaction does: its instructions (the memo is added), the HD indexes of the
    deposit owners that sign beside the hot wallet, and its compute unit limit."""

    instructions: list[Instruction]
    signers: list[int]
    compute_unit_limit: int


@dataclass(frozen=True)
class Sighting:
    """Where the cluster has one of our transactions now."""

    signature: str  # the signing it has, else the latest one
    status: Status | None

    @property
    def final(self) -> bool:
        return self.status is not None and is_final(self.status)


def is_final(status: Status) -> bool:
    """At the service's commitment (CRYPTO_SOLANA_COMMITMENT): finalized, or confirmed."""
    wanted = COMMITMENT_RANK[settings.CRYPTO_SOLANA_COMMITMENT]
    return COMMITMENT_RANK.get(status.commitment, 0) >= wanted


def _encoded(instruction: Instruction) -> dict[str, object]:
    return {
        "program": str(instruction.program_id),
        "accounts": [
            [str(meta.pubkey), meta.is_signer, meta.is_writable] for meta in instruction.accounts
        ],
        "data": base64.b64encode(bytes(instruction.data)).decode(),
    }


def _decoded(stored: dict[str, object]) -> Instruction:
    accounts = stored["accounts"]
    assert isinstance(accounts, list)
    return Instruction(
        Pubkey.from_string(str(stored["program"])),
        base64.b64decode(str(stored["data"])),
        [
            AccountMeta(Pubkey.from_string(key), signer, writable)
            for key, signer, writable in accounts
        ],
    )


def _latest(chain_tx: SolanaTransaction) -> SolanaAttempt:
    return chain_tx.attempts.order_by("-id")[0]


def _sign(
    chain_tx: SolanaTransaction, *, blockhash: str, last_valid: int, priority_fee: int
) -> SolanaAttempt:
    """Sign the transaction with this blockhash and store the signing (caller's transaction)."""
    payer = solana_hot_wallet_keypair()
    if str(payer.pubkey()) != chain_tx.fee_payer:
        raise ChainError(f"{chain_tx}: the hot wallet changed since it was first signed")
    instructions = [
        set_compute_unit_limit(chain_tx.compute_unit_limit),
        set_compute_unit_price(priority_fee),
        *(_decoded(stored) for stored in chain_tx.instructions),
    ]
    message = MessageV0.try_compile(payer.pubkey(), instructions, [], Hash.from_string(blockhash))
    keypairs = [payer, *(solana_keypair(index) for index in chain_tx.signers)]
    signed = VersionedTransaction(message, keypairs)
    return SolanaAttempt.objects.create(
        solana_transaction=chain_tx,
        signature=str(signed.signatures[0]),
        blockhash=blockhash,
        last_valid_block_height=last_valid,
        priority_fee=priority_fee,
        raw=base64.b64encode(bytes(signed)).decode(),
        created_at=clock.now(),
    )


def _create(*, key: str, purpose: str, plan: Plan, node: SolanaNode) -> SolanaTransaction:
    payer = str(solana_hot_wallet_keypair().pubkey())
    memo = create_memo(
        MemoParams(
            program_id=MEMO_PROGRAM_ID, signer=Pubkey.from_string(payer), message=key.encode()
        )
    )
    blockhash, last_valid = node.latest_blockhash()
    now = clock.now()
    try:
        with transaction.atomic():
            chain_tx = SolanaTransaction.objects.create(
                key=key,
                purpose=purpose,
                fee_payer=payer,
                signers=plan.signers,
                instructions=[_encoded(i) for i in [*plan.instructions, memo]],
                compute_unit_limit=plan.compute_unit_limit,
                status=TxStatus.PENDING,
                next_check_at=now + timedelta(seconds=CHECK_SECONDS),
                created_at=now,
                updated_at=now,
            )
            _sign(
                chain_tx,
                blockhash=blockhash,
                last_valid=last_valid,
                priority_fee=settings.CRYPTO_SOLANA_PRIORITY_FEE_MICROLAMPORTS,
            )
    except IntegrityError:
        # A twin worker stored it while this one asked the node: its signing is the one.
        return SolanaTransaction.objects.get(key=key)
    return chain_tx


def solana_transaction_send(
    *, key: str, purpose: str, build: Callable[[], Plan]
) -> SolanaTransaction:
    """The transaction of ``key``: built (``build`` may ask the node) and signed once, and sent.
    The same key gives it back; a refused one is signed again and sent. Raises SendRefusedError
    when the node refused its signing, ChainError before one was made; once one was sent the
    transactions sweep moves it on."""
    node = solana_node()
    chain_tx = SolanaTransaction.objects.filter(key=key).first()
    if chain_tx is None:
        chain_tx = _create(key=key, purpose=purpose, plan=build(), node=node)
    elif chain_tx.status == TxStatus.REFUSED:
        last = _latest(chain_tx)
        if _sighting(chain_tx, node).status is not None:
            _record(chain_tx, TxStatus.REFUSED, status=TxStatus.PENDING, next_check_at=clock.now())
            return chain_tx  # refused, yet the cluster has it: the sweep records where
        if _sign_again(chain_tx, node, last, priority_fee=last.priority_fee) is None:
            return chain_tx  # a twin signed it again
    else:
        return chain_tx
    chain_tx.refresh_from_db()
    _send(node, chain_tx, _latest(chain_tx), preflight=True)
    return chain_tx


def _send(
    node: SolanaNode, chain_tx: SolanaTransaction, attempt: SolanaAttempt, *, preflight: bool
) -> None:
    """Hand a signing to the node. Refused at preflight, it is marked so (nothing was forwarded)
    and SendRefusedError raised; any other outcome is only logged: the sweep sends it again
    while it is valid, and signs it again once it expired unseen."""
    try:
        node.send(base64.b64decode(attempt.raw), preflight=preflight)
    except SendRefusedError as exc:
        if not preflight:
            logger.warning("sending %s again: %s", attempt.signature, exc)
            return
        with transaction.atomic():
            SolanaAttempt.objects.filter(pk=attempt.pk).update(refused=str(exc)[:300])
            if not chain_tx.attempts.filter(pk__gt=attempt.pk).exists():
                _record(
                    chain_tx,
                    TxStatus.PENDING,
                    status=TxStatus.REFUSED,
                    error=str(exc)[:300],
                    next_check_at=None,
                )
        raise
    except ChainError as exc:
        logger.info("sending %s: %s", attempt.signature, exc)


def _sighting(chain_tx: SolanaTransaction, node: SolanaNode) -> Sighting:
    attempts = list(chain_tx.attempts.order_by("-id"))
    statuses = node.statuses([a.signature for a in attempts])
    seen = [(a, s) for a, s in zip(attempts, statuses, strict=True) if s is not None]
    if not seen:
        return Sighting(signature=attempts[0].signature, status=None)
    attempt, status = max(seen, key=lambda pair: COMMITMENT_RANK.get(pair[1].commitment, 0))
    return Sighting(signature=attempt.signature, status=status)


def solana_transaction_sighting(chain_tx: SolanaTransaction) -> Sighting:
    """Where the cluster has the transaction now (network I/O, nothing changes)."""
    return _sighting(chain_tx, solana_node())


def _record(chain_tx: SolanaTransaction, *statuses: str, **fields: object) -> None:
    SolanaTransaction.objects.filter(
        pk=chain_tx.pk, status__in=statuses or SolanaTransaction.LIVE
    ).update(updated_at=clock.now(), **fields)


def _sign_again(
    chain_tx: SolanaTransaction, node: SolanaNode, last: SolanaAttempt, *, priority_fee: int
) -> SolanaAttempt | None:
    """A new signing with a new blockhash, unless a twin signed it again first. Within the
    same block (the same blockhash and fee) the signing would be the same bytes: that one is
    sent again instead."""
    blockhash, last_valid = node.latest_blockhash()
    with transaction.atomic():
        locked = SolanaTransaction.objects.select_for_update().filter(pk=chain_tx.pk).first()
        if locked is None or locked.status == TxStatus.FINAL or _latest(locked).pk != last.pk:
            return None
        if (blockhash, priority_fee) == (last.blockhash, last.priority_fee):
            SolanaAttempt.objects.filter(pk=last.pk).update(refused="")
            attempt = last
        else:
            attempt = _sign(
                locked, blockhash=blockhash, last_valid=last_valid, priority_fee=priority_fee
            )
        locked.status = TxStatus.PENDING
        locked.error = ""
        locked.next_check_at = clock.now() + timedelta(seconds=CHECK_SECONDS)
        locked.updated_at = clock.now()
        locked.save(update_fields=["status", "error", "next_check_at", "updated_at"])
    logger.info("%s: signed again, %s replaces %s", chain_tx, attempt.signature, last.signature)
    return attempt


def solana_transaction_check(*, transaction_id: str) -> SolanaTransaction | None:
    """One look at a live transaction: record where the cluster has it; out of every block,
    send its signing again, or sign it again once that signing expired unseen."""
    chain_tx = SolanaTransaction.objects.filter(
        pk=transaction_id, status__in=SolanaTransaction.LIVE
    ).first()
    if chain_tx is None:
        return None
    node = solana_node()
    # The height first: when it is past a signing's last valid height and the statuses read
    # after it still have none of its signatures, no block that could hold one can be
    # finalized any more.
    height = node.block_height()
    seen = _sighting(chain_tx, node)
    due = clock.now() + timedelta(seconds=CHECK_SECONDS)
    if seen.status is not None:
        final = seen.final
        _record(
            chain_tx,
            status=TxStatus.FINAL if final else TxStatus.LANDED,
            landed_signature=seen.signature,
            slot=seen.status.slot,
            succeeded=(not seen.status.error) if final else None,
            error=seen.status.error[:300],
            next_check_at=None if final else due,
        )
    else:
        latest = _latest(chain_tx)
        if height > latest.last_valid_block_height:
            fee = min(
                2 * latest.priority_fee, settings.CRYPTO_SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS
            )
            latest = (
                _sign_again(chain_tx, node, latest, priority_fee=max(fee, latest.priority_fee))
                or latest
            )
        _record(
            chain_tx, status=TxStatus.PENDING, landed_signature="", slot=None, next_check_at=due
        )
        _send(node, chain_tx, latest, preflight=False)
    chain_tx.refresh_from_db()
    return chain_tx


def solana_transactions_sweep() -> int:
    """Look at every live transaction whose deadline came; returns how many were looked at."""
    due = SolanaTransaction.objects.filter(
        status__in=SolanaTransaction.LIVE, next_check_at__lte=clock.now()
    )
    return transactions_check(due, lambda pk: solana_transaction_check(transaction_id=pk))
