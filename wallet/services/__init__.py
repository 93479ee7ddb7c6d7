"""Writes to the wallet. Every call runs inside the caller's transaction (or its own)."""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Round

from core import clock
from core.db import ModelRows
from core.ledger_version import ledger_version_bump
from core.metrics import MONEY_MOVED, count_on_commit
from merchants.models import Merchant
from wallet.models import Account, Posting, Transfer

# Whose account: the merchant's, or the service's (merchant null).
MINE, SERVICE = True, False

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
    transfer = Transfer(
        kind=kind, cause_type=cause_type, cause_id=cause_id, memo=memo, created_at=clock.now()
    )
    # Inside the caller's transaction no savepoint is needed: a refused debit aborts the cause.
    with transaction.atomic(savepoint=False):
        for account_id in sorted(net):
            delta = net[account_id]
            if delta == 0:
                continue
            guard = -delta if delta < 0 and account_id in guarded else None
            if not _balance_move(account_id=account_id, delta=delta, at_least=guard):
                raise InsufficientFundsError(str(accounts[account_id]))
        _transfer_insert(
            transfer,
            [Posting(transfer=transfer, account_id=a, amount=d) for a, d in net.items() if d != 0],
        )
        # What the transfer moved: the sum of what its accounts received.
        count_on_commit(MONEY_MOVED, float(sum(d for d in net.values() if d > 0)), kind)
    return transfer


# A balance moved by ``delta``, refused (no row) when ``at_least`` is given and the balance is
# below it. Written out for PostgreSQL: every wallet transfer makes one or two, and compiling
# them through the ORM cost more CPU than running them.
_ACCOUNTS = ModelRows(Account)
_BALANCE, _ID = _ACCOUNTS.quoted(["balance", "id"])
_BALANCE_MOVE = (
    f"UPDATE {_ACCOUNTS.table()} SET {_BALANCE} = ROUND({_BALANCE} + %s, 2) WHERE {_ID} = %s"  # noqa: S608
)
_GUARDED_BALANCE_MOVE = f"{_BALANCE_MOVE} AND {_BALANCE} >= %s"


def _balance_move(*, account_id: int, delta: Decimal, at_least: Decimal | None) -> bool:
    if connection.vendor != "postgresql":
        rows = Account.objects.filter(pk=account_id)
        if at_least is not None:
            rows = rows.filter(balance__gte=at_least)
        # Round: SQLite (the quick start) adds decimals as floats and would drift off the cent.
        return rows.update(balance=Round(F("balance") + delta, 2)) == 1
    with connection.cursor() as cursor:
        if at_least is None:
            cursor.execute(_BALANCE_MOVE, [delta, account_id])
        else:
            cursor.execute(_GUARDED_BALANCE_MOVE, [delta, account_id, at_least])
        moved: int = cursor.rowcount
    return moved == 1


# The transfer and its postings in one statement (the postings' foreign key is checked at the
# statement's end, when the transfer is there).
_TRANSFER_INSERT = (
    "WITH transfer AS (INSERT INTO wallet_transfer (id, kind, cause_type, cause_id, memo,"
    " created_at) VALUES (%s, %s, %s, %s, %s, %s))"
    " INSERT INTO wallet_posting (transfer_id, account_id, amount)"
    " SELECT %s, account_id, amount"
    " FROM UNNEST(%s::bigint[], %s::numeric[]) AS p(account_id, amount)"
)


def _transfer_insert(transfer: Transfer, postings: list[Posting]) -> None:
    """One round trip on PostgreSQL, after the balances moved: a refused debit inserted
    nothing. Elsewhere (SQLite, the quick start) the ORM's two."""
    if connection.vendor != "postgresql":
        transfer.save(force_insert=True)
        Posting.objects.bulk_create(postings)
        return
    t = transfer
    with connection.cursor() as cursor:
        cursor.execute(
            _TRANSFER_INSERT,
            [
                t.id,
                t.kind,
                t.cause_type,
                t.cause_id,
                t.memo,
                t.created_at,
                t.id,
                [p.account_id for p in postings],
                [p.amount for p in postings],
            ],
        )
    transfer._state.adding = False


def wallet_admin_credit(*, merchant: Merchant, amount: Decimal, reason: str) -> Transfer:
    """Money from outside (a staff credit) into the merchant's spendable balance: a row of its
    ledger."""
    transfer = transfer_post(
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
    ledger_version_bump(merchant_id=merchant.pk)  # after the write: at once outside a transaction
    return transfer


def _merchant_account(merchant: Merchant, kind: str) -> Account:
    return account_get(merchant=merchant, kind=kind)


# Every move of money starts with this read, written out by hand as the per-request reads are
# (``core.db.ModelRows``). Built from model metadata only; every value goes as a parameter.
_ACCOUNTS_SELECT = f"SELECT {_ACCOUNTS.columns('a')} FROM {_ACCOUNTS.table('a')} WHERE "  # noqa: S608


def _rows(merchant: Merchant, mine: list[str], service: list[str]) -> list[Account]:
    """The merchant's accounts of the kinds ``mine`` and the service's of the kinds ``service``."""
    where, params = [], []
    if mine:
        where.append(f"(a.merchant_id = %s AND a.kind IN ({', '.join(['%s'] * len(mine))}))")
        params += [_ACCOUNTS.param("merchant", merchant.pk), *mine]
    if service:
        where.append(f"(a.merchant_id IS NULL AND a.kind IN ({', '.join(['%s'] * len(service))}))")
        params += service
    if not where:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_ACCOUNTS_SELECT + " OR ".join(where), params)
        return [_ACCOUNTS.build(row) for row in cursor.fetchall()]


def _accounts(
    merchant: Merchant, wanted: Iterable[tuple[bool, str]]
) -> dict[tuple[bool, str], Account]:
    """The accounts named by (the merchant's or else the service's, kind), in one read; each made
    on first use."""
    wanted = set(wanted)
    mine = [kind for merchants, kind in wanted if merchants]
    service = [kind for merchants, kind in wanted if not merchants]
    found = {(row.merchant_id is not None, row.kind): row for row in _rows(merchant, mine, service)}
    for merchants, kind in wanted - found.keys():
        found[(merchants, kind)] = account_get(merchant=merchant if merchants else None, kind=kind)
    return found


def _available_and_locked(merchant: Merchant) -> tuple[Account, Account]:
    """The merchant's two accounts in one read (each made on first use)."""
    found = _accounts(merchant, [(MINE, Account.Kind.AVAILABLE), (MINE, Account.Kind.LOCKED)])
    return found[(MINE, Account.Kind.AVAILABLE)], found[(MINE, Account.Kind.LOCKED)]


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


_AVAILABLE, _ESCROW = (MINE, Account.Kind.AVAILABLE), (MINE, Account.Kind.ESCROW)
_COLLATERAL = (MINE, Account.Kind.COLLATERAL)
_ITEMS, _ADVANCES = (
    (SERVICE, Account.Kind.DEPOSIT_ITEMS),
    (SERVICE, Account.Kind.PROVIDER_COLLATERAL),
)
_LOSSES = (SERVICE, Account.Kind.PROVIDER_LOSSES)
# (credit, stage) -> its moves: (source, target, the part of the value moved, may overdraw). The
# parts: the deposit's whole value, the merchant's collateral, the provider's advance (the rest).
_DEPOSIT_PLANS: dict[
    tuple[str, str], list[tuple[tuple[bool, str], tuple[bool, str], str, bool]]
] = {
    (DepositCredit.ESCROW, "accept"): [(_ITEMS, _ESCROW, "value", False)],
    (DepositCredit.ESCROW, "complete"): [(_ESCROW, _AVAILABLE, "value", False)],
    (DepositCredit.ESCROW, "reverse"): [(_ESCROW, _ITEMS, "value", False)],
    (DepositCredit.INSTANT, "accept"): [
        (_ADVANCES, _AVAILABLE, "value", False),
        (_AVAILABLE, _COLLATERAL, "merchant", False),
    ],
    (DepositCredit.INSTANT, "complete"): [
        (_ITEMS, _ADVANCES, "value", False),
        (_COLLATERAL, _AVAILABLE, "merchant", False),
    ],
    (DepositCredit.INSTANT, "reverse"): [
        (_COLLATERAL, _ADVANCES, "merchant", False),
        (_LOSSES, _ADVANCES, "provider", False),
    ],
    (DepositCredit.SELF, "accept"): [(_ITEMS, _AVAILABLE, "value", False)],
    (DepositCredit.SELF, "complete"): [],
    (DepositCredit.SELF, "reverse"): [(_AVAILABLE, _ITEMS, "value", True)],
}


def _deposit_moves(
    merchant: Merchant, credit: str, stage: str, value: Decimal, merchant_part: Decimal
) -> list[Move]:
    """The moves of one deposit stage (accept, complete, reverse) for one way of crediting,
    reading only the accounts they move, in one read."""
    parts = {"value": value, "merchant": merchant_part, "provider": value - merchant_part}
    plan = [step for step in _DEPOSIT_PLANS[(credit, stage)] if parts[step[2]] > 0]
    accounts = _accounts(
        merchant, {side for source, target, _, _ in plan for side in (source, target)}
    )
    return [
        Move(
            source=accounts[source],
            target=accounts[target],
            amount=parts[part],
            may_overdraw=overdraw,
        )
        for source, target, part, overdraw in plan
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
    refusal is its own (a savepoint), so the caller's transaction goes on. A row of the
    merchant's ledger."""
    with transaction.atomic():
        transfer = transfer_post(
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
        ledger_version_bump(merchant_id=merchant.pk)
        return transfer


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
