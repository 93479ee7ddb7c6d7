"""Sweeps of deposit token accounts: their tokens moved to the hot wallet's token account of the
mint, every sweep recorded. One transaction each: ``transferChecked`` of the whole balance signed
by the deposit owner (the hot wallet pays the fee, so no top-up is needed as on EVM chains) and,
when the account closes, ``closeAccount`` with its rent back to the hot wallet.

A sweep closes an account once a completed deposit emptied it, and again once a transfer
created it anew after that (the domain's close, through the gateway), runs on a schedule for
open accounts credited since their last sweep (from CRYPTO_SOLANA_SWEEP_MIN_TOKENS) and at once
when staff ask in the admin (any balance). A transfer that lands between the balance read and
the sweep makes ``closeAccount`` fail, and with it the whole transaction: the sweep fails, the
next one reads the balance again. No USD moves: the tokens were credited when they arrived."""

import logging
from datetime import timedelta
from decimal import Decimal
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from solders.pubkey import Pubkey
from spl.token.constants import TOKEN_PROGRAM_ID
from spl.token.instructions import (
    close_account,
    create_idempotent_associated_token_account,
    get_associated_token_address,
    transfer_checked,
)
from spl.token.models import CloseAccountParams, TransferCheckedParams

from core import clock
from crypto.chains.base import AccountState, ChainError
from crypto.keys import solana_hot_wallet_keypair
from crypto.models import CryptoDeposit, SolanaTokenAccount
from crypto.networks import SOL, network
from crypto.solana.models import SolanaSweep, SolanaTransaction
from crypto.solana.node import SendRefusedError, solana_node
from crypto.solana.transactions import Plan, solana_transaction_check, solana_transaction_send

logger = logging.getLogger(__name__)

Status = SolanaSweep.Status
STEP_SECONDS = 10
SWEEP_COMPUTE_UNITS = 60_000


def _plan(account: SolanaTokenAccount, units: int, *, closes: bool) -> Plan:
    hot = solana_hot_wallet_keypair().pubkey()
    owner = Pubkey.from_string(account.allocation.solana_owner or "")
    mint = Pubkey.from_string(account.mint)
    source = Pubkey.from_string(account.address)
    instructions = []
    if units:
        destination = get_associated_token_address(hot, mint)
        instructions += [
            create_idempotent_associated_token_account(hot, hot, mint),
            transfer_checked(
                TransferCheckedParams(
                    program_id=TOKEN_PROGRAM_ID,
                    source=source,
                    mint=mint,
                    dest=destination,
                    owner=owner,
                    amount=units,
                    decimals=network(SOL).token(account.token).decimals,
                )
            ),
        ]
    if closes:
        instructions.append(
            close_account(
                CloseAccountParams(
                    program_id=TOKEN_PROGRAM_ID, account=source, dest=hot, owner=owner
                )
            )
        )
    return Plan(
        instructions, signers=[account.allocation_id], compute_unit_limit=SWEEP_COMPUTE_UNITS
    )


def solana_sweep_start(
    *, account: SolanaTokenAccount, trigger: str, closes: bool, minimum: Decimal
) -> SolanaSweep | None:
    """Sweep the account's tokens (and close it with ``closes``) when it holds at least
    ``minimum`` (and more than nothing, unless it closes). None when there is nothing to do or
    a sweep of it is under way. Network I/O first."""
    # Taken before the balance is read: a deposit credited after this moment may not be in it,
    # and the schedule counts such a deposit as swept only by a sweep started after it.
    now = clock.now()
    units = solana_node().token_balance(account.address)
    decimals = network(SOL).token(account.token).decimals
    amount = Decimal(units or 0).scaleb(-decimals)
    if units is None or (not closes and (units <= 0 or amount < minimum)):
        return None
    try:
        with transaction.atomic():
            sweep = SolanaSweep.objects.create(
                account=account,
                address=account.address,
                token=account.token,
                amount=amount,
                closes=closes,
                status=Status.SWEEPING,
                trigger=trigger,
                next_step_at=now + timedelta(seconds=STEP_SECONDS),
                created_at=now,
                updated_at=now,
            )
    except IntegrityError:
        return None  # a live sweep of this account
    try:
        sent = solana_transaction_send(
            key=f"sweep:{sweep.pk}",
            purpose=SolanaTransaction.Purpose.SWEEP,
            build=lambda: _plan(account, int(units), closes=closes),
        )
    except SendRefusedError as exc:
        _finish(sweep, Status.FAILED, reason=str(exc))
    except ChainError as exc:
        _finish(sweep, Status.FAILED, reason=f"not signed: {exc}")
    else:
        SolanaSweep.objects.filter(pk=sweep.pk).update(solana_transaction=sent)
    sweep.refresh_from_db()
    return sweep


def solana_sweep_step(*, sweep_id: UUID | str) -> SolanaSweep | None:
    """One look at a live sweep's transaction: completed once final and succeeded."""
    sweep = SolanaSweep.objects.filter(pk=sweep_id, status=Status.SWEEPING).first()
    if sweep is None:
        return None
    SolanaSweep.objects.filter(pk=sweep.pk, next_step_at=sweep.next_step_at).update(
        next_step_at=clock.now() + timedelta(seconds=STEP_SECONDS)
    )
    if sweep.solana_transaction_id is None:
        _finish(sweep, Status.FAILED, reason="no transaction was signed")
        return _reloaded(sweep)
    try:
        chain_tx = solana_transaction_check(transaction_id=str(sweep.solana_transaction_id))
    except ChainError as exc:
        logger.warning("sweep %s waits: %s", sweep.pk, exc)
        return _reloaded(sweep)
    chain_tx = chain_tx or SolanaTransaction.objects.get(pk=sweep.solana_transaction_id)
    if chain_tx.status == SolanaTransaction.Status.REFUSED:
        _finish(sweep, Status.FAILED, reason=chain_tx.error)
    elif chain_tx.status == SolanaTransaction.Status.FINAL:
        if chain_tx.succeeded:
            _finish(sweep, Status.COMPLETED, tx_hash=chain_tx.landed_signature)
        else:
            _finish(sweep, Status.FAILED, reason=chain_tx.error, tx_hash=chain_tx.landed_signature)
    return _reloaded(sweep)


def _reloaded(sweep: SolanaSweep) -> SolanaSweep:
    sweep.refresh_from_db()
    return sweep


def _finish(sweep: SolanaSweep, status: str, *, reason: str = "", tx_hash: str = "") -> None:
    now = clock.now()
    SolanaSweep.objects.filter(pk=sweep.pk, status=Status.SWEEPING).update(
        status=status,
        reason=reason[:300],
        tx_hash=tx_hash,
        next_step_at=None,
        updated_at=now,
        completed_at=now if status == Status.COMPLETED else None,
    )


def solana_account_close_step(*, account: SolanaTokenAccount) -> str:
    """One step of closing a deposit account on the chain (the domain closed it): a closing
    sweep started, or looked at. An AccountState: CLOSED once the chain no longer has it, read
    after any sweep of it ended: a closing that completed closed the account it found, and a
    wallet may have created it again since, paying into it."""
    live = SolanaSweep.objects.filter(address=account.address, status=Status.SWEEPING).first()
    if live is not None:
        live = solana_sweep_step(sweep_id=live.pk)
        if live is not None and live.status == Status.SWEEPING:
            return AccountState.OPEN
    if solana_node().account_owner(account.address) is None:
        return AccountState.CLOSED
    solana_sweep_start(
        account=account, trigger=SolanaSweep.Trigger.CLOSE, closes=True, minimum=Decimal(0)
    )
    return AccountState.OPEN


def solana_sweeps_advance() -> int:
    """One step of every live sweep whose deadline came; returns how many."""
    rows = SolanaSweep.objects.filter(
        status=Status.SWEEPING, next_step_at__lte=clock.now()
    ).order_by("next_step_at")
    due = list(rows.values_list("id", flat=True)[:500])
    for sweep_id in due:
        solana_sweep_step(sweep_id=sweep_id)
    return len(due)


def solana_sweeps_plan() -> int:
    """The schedule: every open deposit account credited since its last sweep (live or
    completed) holding at least CRYPTO_SOLANA_SWEEP_MIN_TOKENS. Returns how many started."""
    swept_since = SolanaSweep.objects.filter(
        address=OuterRef("token_account"),
        status__in=[Status.SWEEPING, Status.COMPLETED],
        created_at__gte=OuterRef("completed_at"),
    )
    credited = (
        CryptoDeposit.objects.filter(chain=SOL, status=CryptoDeposit.Status.COMPLETED)
        .exclude(Exists(swept_since))
        .values_list("token_account", flat=True)
        .distinct()[:500]
    )
    accounts = SolanaTokenAccount.objects.filter(
        address__in=list(credited), status=SolanaTokenAccount.Status.ACTIVE
    ).select_related("allocation")
    started = 0
    minimum = Decimal(settings.CRYPTO_SOLANA_SWEEP_MIN_TOKENS)
    for account in accounts:
        try:
            sweep = solana_sweep_start(
                account=account,
                trigger=SolanaSweep.Trigger.SCHEDULE,
                closes=False,
                minimum=minimum,
            )
        except ChainError as exc:
            logger.warning("sweep of %s not started: %s", account, exc)
            continue
        started += sweep is not None
    return started


def solana_sweep_request(*, account_id: int) -> SolanaSweep | None:
    """Staff ask for an account to be swept now, whatever it holds (it stays open)."""
    account = SolanaTokenAccount.objects.select_related("allocation").get(pk=account_id)
    return solana_sweep_start(
        account=account, trigger=SolanaSweep.Trigger.STAFF, closes=False, minimum=Decimal(0)
    )
