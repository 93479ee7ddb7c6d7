"""Writes to the wallet. Every call runs inside the caller's transaction (or its own)."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import F

from config import clock
from merchants.models import Merchant
from wallet.models import Account, Posting, Transfer

CENT = Decimal("0.01")


class InsufficientFundsError(Exception):
    """A move would take a merchant account below zero."""


@dataclass(frozen=True)
class Move:
    source: Account
    target: Account
    amount: Decimal
    #: Only a clawback may push a merchant's available balance below zero.
    may_overdraw: bool = False


def account_get(*, merchant: Merchant | None, kind: str) -> Account:
    account, _ = Account.objects.get_or_create(merchant=merchant, kind=kind)
    return account


def transfer_post(
    *, kind: str, cause_type: str, cause_id: str, moves: Sequence[Move], memo: str = ""
) -> Transfer:
    """One balanced transfer. Raises InsufficientFundsError, changing nothing, if a guarded debit
    would overdraw. Accounts are updated in id order so concurrent transfers cannot deadlock."""
    net: dict[int, Decimal] = defaultdict(Decimal)
    guarded: set[int] = set()
    accounts: dict[int, Account] = {}
    for move in moves:
        amount = move.amount.quantize(CENT)
        if amount <= 0 or amount != move.amount:
            raise ValueError(f"a move needs a positive cent amount, got {move.amount}")
        net[move.source.pk] -= amount
        net[move.target.pk] += amount
        accounts[move.source.pk] = move.source
        accounts[move.target.pk] = move.target
        if move.source.merchant_id is not None and not move.may_overdraw:
            guarded.add(move.source.pk)
    # Inside the caller's transaction no savepoint is needed: a refused debit aborts the cause.
    with transaction.atomic(savepoint=False):
        transfer = Transfer.objects.create(
            kind=kind,
            cause_type=cause_type,
            cause_id=cause_id,
            memo=memo,
            created_at=clock.now(),
        )
        for account_id in sorted(net):
            delta = net[account_id]
            if delta == 0:
                continue
            rows = Account.objects.filter(pk=account_id)
            if delta < 0 and account_id in guarded:
                rows = rows.filter(balance__gte=-delta)
            if rows.update(balance=F("balance") + delta) != 1:
                raise InsufficientFundsError(str(accounts[account_id]))
        Posting.objects.bulk_create(
            Posting(transfer=transfer, account_id=account_id, amount=delta)
            for account_id, delta in net.items()
            if delta != 0
        )
    return transfer


def wallet_admin_credit(*, merchant: Merchant, amount: Decimal, reason: str) -> Transfer:
    """Money from outside (a staff credit) into the merchant's spendable balance."""
    return transfer_post(
        kind="ADMIN_CREDIT",
        cause_type="admin",
        cause_id=str(merchant.pk),
        memo=reason,
        moves=[
            Move(
                source=account_get(merchant=None, kind=Account.Kind.WORLD),
                target=account_get(merchant=merchant, kind=Account.Kind.AVAILABLE),
                amount=amount,
            )
        ],
    )


def _merchant_account(merchant: Merchant, kind: str) -> Account:
    return account_get(merchant=merchant, kind=kind)


def wallet_lock(*, merchant: Merchant, amount: Decimal, cause_type: str, cause_id: str) -> Transfer:
    """Spendable money set aside for a withdrawal or cashout. InsufficientFundsError if short."""
    return transfer_post(
        kind="LOCK",
        cause_type=cause_type,
        cause_id=cause_id,
        moves=[
            Move(
                source=_merchant_account(merchant, Account.Kind.AVAILABLE),
                target=_merchant_account(merchant, Account.Kind.LOCKED),
                amount=amount,
            )
        ],
    )


def wallet_release(
    *, merchant: Merchant, amount: Decimal, cause_type: str, cause_id: str, kind: str = "REFUND"
) -> Transfer:
    """Locked money back to spendable: a refund, or the unused part of a lock."""
    return transfer_post(
        kind=kind,
        cause_type=cause_type,
        cause_id=cause_id,
        moves=[
            Move(
                source=_merchant_account(merchant, Account.Kind.LOCKED),
                target=_merchant_account(merchant, Account.Kind.AVAILABLE),
                amount=amount,
            )
        ],
    )


def wallet_settle_purchase(
    *, merchant: Merchant, gross: Decimal, sourcing: Decimal, cause_type: str, cause_id: str
) -> Transfer:
    """A delivered withdrawal item: the sourcing price to the supplier, the rest is revenue."""
    locked = _merchant_account(merchant, Account.Kind.LOCKED)
    moves = [
        Move(
            source=locked,
            target=account_get(merchant=None, kind=Account.Kind.SUPPLIER),
            amount=sourcing,
        )
    ]
    if gross > sourcing:
        moves.append(
            Move(
                source=locked,
                target=account_get(merchant=None, kind=Account.Kind.REVENUE),
                amount=gross - sourcing,
            )
        )
    return transfer_post(kind="SETTLE", cause_type=cause_type, cause_id=cause_id, moves=moves)


def wallet_admin_debit(*, merchant: Merchant, amount: Decimal, reason: str) -> Transfer:
    """Money out of the merchant's spendable balance to the outside world (a staff debit).
    InsufficientFundsError, changing nothing, if it would take ``available`` below zero; the
    refusal is its own (a savepoint), so the caller's transaction goes on."""
    with transaction.atomic():
        return transfer_post(
            kind="ADMIN_DEBIT",
            cause_type="admin",
            cause_id=str(merchant.pk),
            memo=reason,
            moves=[
                Move(
                    source=account_get(merchant=merchant, kind=Account.Kind.AVAILABLE),
                    target=account_get(merchant=None, kind=Account.Kind.WORLD),
                    amount=amount,
                )
            ],
        )


def wallet_merchant_transfer(
    *,
    source: Merchant,
    target: Merchant,
    amount: Decimal,
    cause_type: str,
    cause_id: str,
    memo: str = "",
) -> Transfer:
    """Spendable money from one merchant to another. InsufficientFundsError, changing nothing,
    if the source's ``available`` would go below zero."""
    if source.pk == target.pk:
        raise ValueError("a merchant cannot transfer to itself")
    return transfer_post(
        kind="INTERNAL_TRANSFER",
        cause_type=cause_type,
        cause_id=cause_id,
        memo=memo,
        moves=[
            Move(
                source=account_get(merchant=source, kind=Account.Kind.AVAILABLE),
                target=account_get(merchant=target, kind=Account.Kind.AVAILABLE),
                amount=amount,
            )
        ],
    )
