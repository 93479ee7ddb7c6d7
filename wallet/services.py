"""Writes to the wallet. Every call runs inside the caller's transaction (or its own)."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Round

from core import clock
from core.metrics import MONEY_MOVED, count_on_commit
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
            # Round: SQLite (the quick start) adds decimals as floats and would drift off the cent.
            if rows.update(balance=Round(F("balance") + delta, 2)) != 1:
                raise InsufficientFundsError(str(accounts[account_id]))
        Posting.objects.bulk_create(
            Posting(transfer=transfer, account_id=account_id, amount=delta)
            for account_id, delta in net.items()
            if delta != 0
        )
        # What the transfer moved: the sum of what its accounts received.
        count_on_commit(MONEY_MOVED, float(sum(d for d in net.values() if d > 0)), kind)
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


def _available_and_locked(merchant: Merchant) -> tuple[Account, Account]:
    """The merchant's two accounts in one read (each made on first use)."""
    kinds = (Account.Kind.AVAILABLE, Account.Kind.LOCKED)
    found = {a.kind: a for a in Account.objects.filter(merchant=merchant, kind__in=kinds)}
    available, locked = (
        found.get(kind) or account_get(merchant=merchant, kind=kind) for kind in kinds
    )
    return available, locked


def wallet_lock(*, merchant: Merchant, amount: Decimal, cause_type: str, cause_id: str) -> Transfer:
    """Spendable money set aside for a withdrawal or cashout. InsufficientFundsError if short."""
    available, locked = _available_and_locked(merchant)
    return transfer_post(
        kind="LOCK",
        cause_type=cause_type,
        cause_id=cause_id,
        moves=[Move(source=available, target=locked, amount=amount)],
    )


def wallet_release(
    *, merchant: Merchant, amount: Decimal, cause_type: str, cause_id: str, kind: str = "REFUND"
) -> Transfer:
    """Locked money back to spendable: a refund, or the unused part of a lock."""
    available, locked = _available_and_locked(merchant)
    return transfer_post(
        kind=kind,
        cause_type=cause_type,
        cause_id=cause_id,
        moves=[Move(source=locked, target=available, amount=amount)],
    )


class DepositCredit:
    """How a deposit's value reaches the merchant (decisions sections 3 and 4)."""

    #: standard client deposit: held in escrow until the hold ends
    ESCROW = "escrow"
    #: instant client deposit: the provider advances the value; the merchant backs its part
    INSTANT = "instant"
    #: self sell: credited on acceptance, the merchant bears a reversal in full
    SELF = "self"


def _deposit_moves(
    merchant: Merchant, credit: str, stage: str, value: Decimal, merchant_part: Decimal
) -> list[Move]:
    """The moves of one deposit stage (accept, complete, reverse) for one way of crediting."""

    def mine(kind: str) -> Account:
        return _merchant_account(merchant, kind)

    def service(kind: str) -> Account:
        return account_get(merchant=None, kind=kind)

    available, escrow = Account.Kind.AVAILABLE, Account.Kind.ESCROW
    collateral, items = Account.Kind.COLLATERAL, Account.Kind.DEPOSIT_ITEMS
    advances, losses = Account.Kind.PROVIDER_COLLATERAL, Account.Kind.PROVIDER_LOSSES
    provider_part = value - merchant_part
    plans: dict[tuple[str, str], list[tuple[Account, Account, Decimal, bool]]] = {
        (DepositCredit.ESCROW, "accept"): [(service(items), mine(escrow), value, False)],
        (DepositCredit.ESCROW, "complete"): [(mine(escrow), mine(available), value, False)],
        (DepositCredit.ESCROW, "reverse"): [(mine(escrow), service(items), value, False)],
        (DepositCredit.INSTANT, "accept"): [
            (service(advances), mine(available), value, False),
            (mine(available), mine(collateral), merchant_part, False),
        ],
        (DepositCredit.INSTANT, "complete"): [
            (service(items), service(advances), value, False),
            (mine(collateral), mine(available), merchant_part, False),
        ],
        (DepositCredit.INSTANT, "reverse"): [
            (mine(collateral), service(advances), merchant_part, False),
            (service(losses), service(advances), provider_part, False),
        ],
        (DepositCredit.SELF, "accept"): [(service(items), mine(available), value, False)],
        (DepositCredit.SELF, "complete"): [],
        (DepositCredit.SELF, "reverse"): [(mine(available), service(items), value, True)],
    }
    return [
        Move(source=source, target=target, amount=amount, may_overdraw=overdraw)
        for source, target, amount, overdraw in plans[(credit, stage)]
        if amount > 0
    ]


def wallet_deposit_post(
    *,
    merchant: Merchant,
    credit: str,
    stage: str,
    value: Decimal,
    merchant_part: Decimal,
    cause_id: str,
) -> Transfer | None:
    """A deposit's money at one stage: ``accept`` (the owner accepted the offer), ``complete``
    (the hold ended) or ``reverse`` (the platform rolled the trade back: the clawback, which may
    leave a self-selling merchant in debt). Nothing to post gives None."""
    moves = _deposit_moves(merchant, credit, stage, value, merchant_part)
    if not moves:
        return None
    return transfer_post(
        kind=f"DEPOSIT_{stage.upper()}", cause_type="trade", cause_id=cause_id, moves=moves
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


def wallet_crypto_credit(*, merchant: Merchant, amount: Decimal, cause_id: str) -> Transfer:
    """A completed crypto deposit: money from outside into the merchant's spendable balance."""
    return transfer_post(
        kind="CRYPTO_DEPOSIT",
        cause_type="crypto_deposit",
        cause_id=cause_id,
        moves=[
            Move(
                source=account_get(merchant=None, kind=Account.Kind.WORLD),
                target=_merchant_account(merchant, Account.Kind.AVAILABLE),
                amount=amount,
            )
        ],
    )


def wallet_settle_cashout(
    *, merchant: Merchant, sent: Decimal, fee: Decimal, cause_id: str
) -> Transfer:
    """A confirmed crypto cashout: what was sent leaves to the outside world, the fee is
    revenue; both from the cashout's lock."""
    locked = _merchant_account(merchant, Account.Kind.LOCKED)
    moves = [
        Move(source=locked, target=account_get(merchant=None, kind=Account.Kind.WORLD), amount=sent)
    ]
    if fee > 0:
        moves.append(
            Move(
                source=locked,
                target=account_get(merchant=None, kind=Account.Kind.REVENUE),
                amount=fee,
            )
        )
    return transfer_post(
        kind="CRYPTO_WITHDRAWAL", cause_type="crypto_withdrawal", cause_id=cause_id, moves=moves
    )


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
