"""Crypto cashouts: the amount is locked at creation and refunded in full on any exit.

Client cashouts wait for the merchant's approval callback (awaiting_approval); above the
merchant's review threshold staff decide (in_review); approved ones are broadcast by a worker
(sent, with txHash) and complete once confirmed, when the lock settles to the outside world (what
was sent) and revenue (the fee). Exits: failed (approval timeout, broadcast refused, transaction
dropped), rejected (merchant or staff), cancelled (staff). Each change emits
``crypto_withdrawal.<status>`` and moves the WITHDRAWAL funding; exits add a REFUND funding.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction

from core import clock
from core.db import atomic_retried, constraint_violated, model_constraint
from core.errors import DomainError
from core.handoffs import Handoff, handoff_on_commit
from crypto.chains import get_chains
from crypto.chains.base import BroadcastError, TransferState
from crypto.destinations import cashout_address_check
from crypto.models import CryptoWithdrawal
from crypto.networks import min_confirmations, network
from crypto.services.common import (
    chain_paused,
    chain_paused_or_unknown,
    chain_status,
    crypto_access_check,
    now_ms,
    rows_refresh,
    withdraw_review_above_cents,
    withdrawal_emit,
)
from ledger.models import Funding
from ledger.services import funding_record, funding_status_set
from merchants.models import Merchant
from merchants.webhooks.outbox import Approval
from wallet.services import (
    InsufficientFundsError,
    wallet_lock,
    wallet_release,
    wallet_settle_cashout,
)

# A cashout's transaction signed and sent, after the commit that approved it.
CASHOUT_BROADCAST = Handoff("crypto.broadcast_withdrawal")
# A user's requestId names one cashout: a concurrent repeat answers the first one.
REQUEST_TAKEN = model_constraint(CryptoWithdrawal, "crypto_withdrawal_request_per_user")

Status = CryptoWithdrawal.Status
FUNDING_STATUS = {
    Status.AWAITING_APPROVAL: Funding.Status.INITIATED,
    Status.IN_REVIEW: Funding.Status.PENDING_ADMIN,
    Status.APPROVED: Funding.Status.APPROVED,
    Status.SENT: Funding.Status.PENDING,
    Status.COMPLETED: Funding.Status.COMPLETED,
    Status.REJECTED: Funding.Status.REJECTED,
    Status.FAILED: Funding.Status.FAILED,
    Status.CANCELLED: Funding.Status.CANCELLED,
}
FINAL = frozenset({Status.COMPLETED, Status.FAILED, Status.REJECTED, Status.CANCELLED})
CANCELLABLE = frozenset({Status.AWAITING_APPROVAL, Status.IN_REVIEW})
SOURCE = "crypto_withdrawal"
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cashout:
    """What a caller asks to send: the parsed body of a cashout, in cents."""

    chain: str
    token: str
    address: str
    amount_cents: int
    request_id: str


def _cents(value: int) -> Decimal:
    return Decimal(value) / 100


def _lock(withdrawal_id: UUID | str) -> CryptoWithdrawal | None:
    return (
        CryptoWithdrawal.objects.select_for_update(of=("self",), no_key=True)
        .select_related("merchant")
        .filter(pk=withdrawal_id)
        .first()
    )


def _first(merchant: Merchant, platform_id: str, request_id: str) -> CryptoWithdrawal | None:
    return CryptoWithdrawal.objects.filter(
        merchant=merchant, platform_id=platform_id, request_id=request_id
    ).first()


def _move(withdrawal: CryptoWithdrawal, status: str, *, is_approval: bool = False) -> None:
    withdrawal.status = status
    withdrawal.updated_at = now_ms()
    if status == Status.COMPLETED:
        withdrawal.completed_at = withdrawal.updated_at
    funding_status_set(
        source_type=SOURCE,
        source_id=str(withdrawal.id),
        type=Funding.Type.WITHDRAWAL,
        status=FUNDING_STATUS[Status(status)],
        txn_hash=withdrawal.tx_hash,
    )
    withdrawal_emit(withdrawal, is_approval=is_approval)


def _exit(withdrawal: CryptoWithdrawal, status: str, reason: str, detail: str = "") -> None:
    """Every exit gives the whole amount back: the lock is released as a REFUND funding."""
    refund = withdrawal.locked
    if refund > 0:
        wallet_release(
            merchant=withdrawal.merchant,
            amount=refund,
            cause_type=SOURCE,
            cause_id=str(withdrawal.id),
        )
        funding_record(
            merchant=withdrawal.merchant,
            type=Funding.Type.REFUND,
            status=Funding.Status.COMPLETED,
            amount_usd=refund,
            source_type=SOURCE,
            source_id=str(withdrawal.id),
            token=withdrawal.token,
            chain=withdrawal.chain,
            address=withdrawal.address,
        )
    withdrawal.locked = Decimal("0.00")
    withdrawal.reason = reason
    withdrawal.reason_detail = detail[:200]
    withdrawal.next_broadcast_at = None
    _move(withdrawal, status)


def _schedule_broadcast(withdrawal: CryptoWithdrawal) -> None:
    handoff_on_commit(CASHOUT_BROADCAST, str(withdrawal.id))


def _approve(withdrawal: CryptoWithdrawal) -> None:
    """Approved by whoever had to: staff review above the threshold, else on to the chain."""
    if withdrawal.status != Status.IN_REVIEW and withdrawal.amount_cents > (
        withdraw_review_above_cents(withdrawal.merchant_id)
    ):
        _move(withdrawal, Status.IN_REVIEW)
        return
    withdrawal.next_broadcast_at = clock.now()
    _move(withdrawal, Status.APPROVED)
    _schedule_broadcast(withdrawal)


def crypto_withdrawal_create(
    *, merchant: Merchant, platform_id: str, source: str, cashout: Cashout
) -> tuple[CryptoWithdrawal, bool]:
    """The cashout and whether it is new: the same requestId for the same user returns the
    first one, whatever the body says now."""
    crypto_access_check(merchant=merchant)
    first = _first(merchant, platform_id, cashout.request_id)
    if first is not None:
        return first, False
    # A paused chain takes cashouts (they wait); one that cannot be asked refuses them (2500).
    chain_status(cashout.chain, merchant_id=merchant.pk)
    cashout_address_check(chain=cashout.chain, address=cashout.address)
    fee = int(settings.CRYPTO_WITHDRAW_FEE_CENTS[cashout.chain])
    receive = cashout.amount_cents - fee
    least = int(settings.CRYPTO_WITHDRAW_MIN_RECEIVE_CENTS[cashout.chain])
    if receive <= 0 or receive < least:
        raise DomainError(
            "ONCHAIN_WITHDRAW_BELOW_MIN",
            f"After the {fee} cent fee at least {least} cents must arrive.",
            details={"feeCents": fee, "minReceiveCents": least},
        )
    is_client = source == CryptoWithdrawal.Source.CLIENT
    if is_client and not merchant.has_active_callback:
        raise DomainError("MERCHANT_NO_CALLBACK_URL")
    now = now_ms()
    amount = _cents(cashout.amount_cents)

    def write() -> CryptoWithdrawal:
        withdrawal = CryptoWithdrawal.objects.create(
            merchant=merchant,
            platform_id=platform_id,
            source=source,
            request_id=cashout.request_id,
            chain=cashout.chain,
            token=cashout.token,
            address=cashout.address,
            amount_cents=cashout.amount_cents,
            fee_cents=fee,
            receive_cents=receive,
            locked=amount,
            status=Status.AWAITING_APPROVAL,
            created_at=now,
            updated_at=now,
        )
        wallet_lock(
            merchant=merchant, amount=amount, cause_type=SOURCE, cause_id=str(withdrawal.id)
        )
        funding_record(
            merchant=merchant,
            type=Funding.Type.WITHDRAWAL,
            status=Funding.Status.INITIATED,
            amount_usd=amount,
            fee=_cents(fee),
            amount_crypto=_cents(receive),
            token=cashout.token,
            chain=cashout.chain,
            address=cashout.address,
            source_type=SOURCE,
            source_id=str(withdrawal.id),
            created_at=now,
        )
        if is_client:
            withdrawal_emit(withdrawal, is_approval=True)
        else:
            _approve(withdrawal)
        return withdrawal

    try:
        withdrawal = atomic_retried(write)
    except InsufficientFundsError as exc:
        raise DomainError("INSUFFICIENT_BALANCE") from exc
    except IntegrityError as exc:
        if not constraint_violated(exc, CryptoWithdrawal, REQUEST_TAKEN):
            raise
        twin = _first(merchant, platform_id, cashout.request_id)
        if twin is None:
            raise
        return twin, False
    return withdrawal, True


def crypto_withdrawal_approval_resolve(withdrawal_id: str, outcome: str, reason: str) -> None:
    """The merchant's answer to ``crypto_withdrawal.awaiting_approval`` (in the delivery's
    transaction). A cashout that moved on meanwhile (staff cancelled it) stays as it is."""
    withdrawal = _lock(withdrawal_id)
    if withdrawal is None or withdrawal.status != Status.AWAITING_APPROVAL:
        return
    if outcome == Approval.APPROVED:
        _approve(withdrawal)
    elif outcome == Approval.REJECTED:
        _exit(withdrawal, Status.REJECTED, "MERCHANT_REJECTED", reason)
    else:
        _exit(withdrawal, Status.FAILED, "APPROVAL_TIMEOUT", reason)


def crypto_withdrawal_approval_resume(withdrawal_id: str) -> None:
    """The broadcast an approval made due, handed on again: it sends only a cashout still
    approved and due (``crypto_withdrawal_broadcast``), and nothing for one the answer failed."""
    handoff_on_commit(CASHOUT_BROADCAST, withdrawal_id)


def _locked_in(withdrawal_id: str, statuses: frozenset[str]) -> CryptoWithdrawal:
    withdrawal = _lock(withdrawal_id)
    if withdrawal is None:
        raise DomainError("TRANSACTION_NOT_FOUND")
    if withdrawal.status not in statuses:
        raise DomainError("INVALID_TRANSITION", f"The cashout is {withdrawal.status}.")
    return withdrawal


def crypto_withdrawal_review(*, withdrawal_id: str, approve: bool, note: str = "") -> None:
    """Staff decide a cashout in review: approved goes on to the chain, rejected is refunded."""
    with transaction.atomic():
        withdrawal = _locked_in(withdrawal_id, frozenset({Status.IN_REVIEW}))
        if approve:
            _approve(withdrawal)
        else:
            _exit(withdrawal, Status.REJECTED, "STAFF_REJECTED", note)


def crypto_withdrawal_cancel(*, withdrawal_id: str, note: str = "") -> None:
    """Staff stop a cashout nothing was sent for yet (approved ones belong to the broadcaster)."""
    with transaction.atomic():
        withdrawal = _locked_in(withdrawal_id, CANCELLABLE)
        _exit(withdrawal, Status.CANCELLED, "CANCELLED_BY_STAFF", note)


def crypto_withdrawals_broadcast_due() -> list[str]:
    rows = CryptoWithdrawal.objects.filter(
        status=Status.APPROVED, next_broadcast_at__lte=clock.now()
    ).order_by("next_broadcast_at")
    return [str(pk) for pk in rows.values_list("id", flat=True)[:500]]


def crypto_withdrawal_broadcast(*, withdrawal_id: str) -> None:
    """Send an approved cashout. Keyed by the cashout, so a twin worker gets the same
    transaction; the chain is called outside any transaction. While the chain cannot be asked
    (its node down, or not the configured network's) it waits: only the gateway knows whether
    a transaction was signed for it, so only its refusal (BroadcastError) counts."""
    withdrawal = CryptoWithdrawal.objects.filter(pk=withdrawal_id).first()
    now = clock.now()
    if (
        withdrawal is None
        or withdrawal.status != Status.APPROVED
        or (withdrawal.next_broadcast_at is not None and withdrawal.next_broadcast_at > now)
        or chain_paused_or_unknown(withdrawal.chain, merchant_id=withdrawal.merchant_id)
        is not False
    ):
        return
    token = network(withdrawal.chain).token(withdrawal.token)
    try:
        tx_hash = get_chains().broadcast(
            tenant=str(withdrawal.merchant_id),
            chain=withdrawal.chain,
            contract=token.contract,
            to=withdrawal.address,
            amount=_cents(withdrawal.receive_cents),
            key=str(withdrawal.id),
        )
    except BroadcastError as exc:  # nothing went out
        _broadcast_failed(withdrawal_id, str(exc))
        return
    with transaction.atomic():
        locked = _lock(withdrawal_id)
        if locked is None or locked.status != Status.APPROVED:
            return
        locked.tx_hash = tx_hash
        locked.next_broadcast_at = None
        _move(locked, Status.SENT)


def _broadcast_failed(withdrawal_id: str, error: str) -> None:
    delays = settings.CRYPTO_BROADCAST_RETRY_SECONDS
    with transaction.atomic():
        withdrawal = _lock(withdrawal_id)
        if withdrawal is None or withdrawal.status != Status.APPROVED:
            return
        withdrawal.broadcast_attempts += 1
        if withdrawal.broadcast_attempts >= settings.CRYPTO_BROADCAST_ATTEMPTS:
            logger.error("cashout %s failed, nothing was sent: %s", withdrawal_id, error)
            _exit(withdrawal, Status.FAILED, "BROADCAST_FAILED", error)
            return
        logger.warning("cashout %s not sent, tried again later: %s", withdrawal_id, error)
        wait = delays[min(withdrawal.broadcast_attempts, len(delays)) - 1]
        withdrawal.next_broadcast_at = clock.now() + timedelta(seconds=wait)
        withdrawal.reason_detail = error[:200]
        withdrawal.save(update_fields=["broadcast_attempts", "next_broadcast_at", "reason_detail"])


def _confirm(withdrawal: CryptoWithdrawal, state: TransferState, *, paused: bool) -> None:
    # A fee bump replaces the transaction: the one that counts is the chain's answer.
    withdrawal.tx_hash = state.tx_hash
    withdrawal.confirmations = max(withdrawal.confirmations, state.confirmations)
    final = withdrawal.confirmations >= min_confirmations(withdrawal.chain) and not paused
    if state.dropped:
        _exit(withdrawal, Status.FAILED, "TX_DROPPED")
    elif final and state.reverted:
        _exit(withdrawal, Status.FAILED, "TX_REVERTED")
    elif final:
        wallet_settle_cashout(
            merchant=withdrawal.merchant,
            sent=_cents(withdrawal.receive_cents),
            fee=_cents(withdrawal.fee_cents),
            cause_id=str(withdrawal.id),
        )
        withdrawal.locked = Decimal("0.00")
        _move(withdrawal, Status.COMPLETED)
    else:
        withdrawal.save(update_fields=["tx_hash", "confirmations"])


def crypto_withdrawal_refresh(*, withdrawal_id: str, paused: bool | None = None) -> None:
    """Apply what the chain says of a sent cashout's transaction. Network I/O first."""
    withdrawal = CryptoWithdrawal.objects.filter(pk=withdrawal_id, status=Status.SENT).first()
    if withdrawal is None:
        return
    state = get_chains().transfer_state(chain=withdrawal.chain, tx_hash=withdrawal.tx_hash)
    if state is None:
        return
    is_paused = (
        chain_paused(withdrawal.chain, merchant_id=withdrawal.merchant_id)
        if paused is None
        else paused
    )
    with transaction.atomic():
        locked = _lock(withdrawal_id)
        if locked is not None and locked.status == Status.SENT:
            _confirm(locked, state, paused=is_paused)


def crypto_withdrawals_sweep_sent() -> int:
    """Every sent cashout, as the chain sees it now; a chain that cannot be asked waits."""
    sent = CryptoWithdrawal.objects.filter(status=Status.SENT).values_list(
        "id", "merchant_id", "chain"
    )[:500]
    rows_refresh(
        sent, lambda pk, paused: crypto_withdrawal_refresh(withdrawal_id=str(pk), paused=paused)
    )
    return len(sent)
