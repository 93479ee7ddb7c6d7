"""Writes to the funding ledger. Called by the services that move the money, inside their
transaction, so a funding row exists exactly when its wallet transfer does."""

import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db import transaction

from core import clock
from core.ledger_version import ledger_version_bump
from ledger.models import Funding
from merchants.models import Merchant
from wallet.models import Transfer
from wallet.services import wallet_merchant_transfer

# The source of both funding rows of a staff transfer between merchants.
INTERNAL_TRANSFER_SOURCE = "internal_transfer"

# Statuses after which a funding does not change any more.
FINAL_STATUSES = frozenset(
    {
        Funding.Status.COMPLETED,
        Funding.Status.REJECTED,
        Funding.Status.FAILED,
        Funding.Status.CANCELLED,
        Funding.Status.REFUNDED,
        Funding.Status.EXPIRED,
    }
)


def funding_record(
    *,
    merchant: Merchant,
    type: str,
    status: str,
    amount_usd: Decimal,
    source_type: str,
    source_id: str,
    fee: Decimal = Decimal("0.00"),
    amount_crypto: Decimal = Decimal(0),
    token: str = "",
    chain: str = "",
    address: str = "",
    txn_hash: str = "",
    created_at: datetime | None = None,
) -> Funding:
    """The funding row of a source (one per source, type and merchant). Recording it again
    returns the first row unchanged, so a retried task cannot write two."""
    now = clock.now()
    funding, created = Funding.objects.get_or_create(
        source_type=source_type,
        source_id=source_id,
        type=type,
        merchant=merchant,
        defaults={
            "status": status,
            "amount_usd": amount_usd,
            "fee": fee,
            "amount_crypto": amount_crypto,
            "token": token,
            "chain": chain,
            "address": address,
            "txn_hash": txn_hash,
            "created_at": created_at or now,
            "updated_at": now,
            "completed_at": now if status == Funding.Status.COMPLETED else None,
        },
    )
    if created:
        ledger_version_bump(merchant_id=merchant.pk)
    return funding


def funding_status_set(
    *, source_type: str, source_id: str, type: str, status: str, txn_hash: str = ""
) -> int:
    """Move a source's funding to ``status`` (compare-and-set: a final funding stays as it is).
    Returns how many rows changed (0 or 1)."""
    now = clock.now()
    changes: dict[str, object] = {"status": status, "updated_at": now}
    if txn_hash:
        changes["txn_hash"] = txn_hash
    if status == Funding.Status.COMPLETED:
        changes["completed_at"] = now
    rows = Funding.objects.filter(source_type=source_type, source_id=source_id, type=type)
    changed = rows.exclude(status__in=FINAL_STATUSES).update(**changes)
    if changed:
        # Whose ledger changed: the source names the funding, not its merchant.
        for merchant_id in rows.values_list("merchant_id", flat=True):
            ledger_version_bump(merchant_id=merchant_id)
    return changed


@dataclass(frozen=True)
class InternalTransfer:
    id: str
    transfer: Transfer
    sent: Funding
    received: Funding


def funding_internal_transfer(
    *, source: Merchant, target: Merchant, amount: Decimal, reason: str
) -> InternalTransfer:
    """Staff move spendable money from one merchant to another: one balanced wallet transfer and
    a COMPLETED ``INTERNAL_TRANSFER`` funding on each side (negative on the sender's).
    InsufficientFundsError, writing nothing, if the sender's available balance is short."""
    transfer_id = str(uuid.uuid4())
    with transaction.atomic():
        transfer = wallet_merchant_transfer(
            source=source,
            target=target,
            amount=amount,
            cause_type=INTERNAL_TRANSFER_SOURCE,
            cause_id=transfer_id,
            memo=reason,
        )
        sides = [(source, -amount), (target, amount)]
        sent, received = (
            funding_record(
                merchant=merchant,
                type=Funding.Type.INTERNAL_TRANSFER,
                status=Funding.Status.COMPLETED,
                amount_usd=signed_amount,
                source_type=INTERNAL_TRANSFER_SOURCE,
                source_id=transfer_id,
            )
            for merchant, signed_amount in sides
        )
    return InternalTransfer(id=transfer_id, transfer=transfer, sent=sent, received=received)
