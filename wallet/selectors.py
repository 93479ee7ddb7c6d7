import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Q, Sum
from django.db.models.functions import Round

from core.db import ModelRows, snapshot_read
from core.ports import DOUBLED_CREDITS, HELD_BALANCES, LOCK_HOLDERS, SHARED_ASSETS, Port
from merchants.models import Merchant
from wallet.models import Account, Posting, WalletCheck
from wallet.representations import WalletBalance

ZERO = Decimal("0.00")
_ACCOUNTS = ModelRows(Account, only=("kind", "balance"))
# Built from model metadata only; the merchant goes as a parameter.
_BALANCES = (
    f"SELECT {_ACCOUNTS.columns('a')} FROM {_ACCOUNTS.table('a')}"  # noqa: S608
    " WHERE a.merchant_id = %s"
)


def wallet_balances(*, merchant: Merchant) -> dict[str, Decimal]:
    """The merchant's balance per account kind. One statement written out: the ORM's building
    of it was a quarter of the balance endpoint's CPU (bench/reads.py)."""
    with connection.cursor() as cursor:
        cursor.execute(_BALANCES, [_ACCOUNTS.param("merchant", merchant.pk)])
        record = _ACCOUNTS.recorder()
        accounts = [record(values) for values in cursor.fetchall()]
    balances: dict[str, Decimal] = {str(kind): Decimal("0.00") for kind in Account.MERCHANT_KINDS}
    balances.update({account.kind: account.balance for account in accounts})
    return balances


@dataclass(frozen=True)
class InvariantReport:
    unbalanced_transfers: list[str]
    drifted_accounts: list[str]
    negative_held_accounts: list[str]
    orphan_locks: list[str]
    unexplained_balances: list[str]
    shared_assets: list[str]
    doubled_credits: list[str]

    @property
    def clean(self) -> bool:
        return not (
            self.unbalanced_transfers
            or self.drifted_accounts
            or self.negative_held_accounts
            or self.orphan_locks
            or self.unexplained_balances
            or self.shared_assets
            or self.doubled_credits
        )


def _orphan_locks() -> list[str]:
    """Each merchant's locked balance is exactly what its live trades and cashouts hold."""
    held: dict[str, Decimal] = defaultdict(Decimal)
    problems: list[str] = []
    for name, count in LOCK_HOLDERS.implementations():
        holding = count()
        problems += [f"{name}: {stale}" for stale in holding.stale]
        for merchant_id, amount in holding.by_merchant.items():
            held[merchant_id] += amount
    locked = {
        str(merchant_id): balance
        for merchant_id, balance in Account.objects.filter(kind=Account.Kind.LOCKED).values_list(
            "merchant_id", "balance"
        )
    }
    for merchant_id in sorted(set(held) | set(locked)):
        if locked.get(merchant_id, Decimal(0)) != held.get(merchant_id, Decimal(0)):
            problems.append(
                f"merchant {merchant_id}: locked {locked.get(merchant_id, Decimal(0))}, "
                f"held by trades and cashouts {held.get(merchant_id, Decimal(0))}"
            )
    return problems


def _unexplained_balances() -> list[str]:
    """Escrow, collateral and the provider's advances are exactly what live deposits hold."""
    problems = []
    for kind, count in HELD_BALANCES.implementations():
        expected = count()
        actual: dict[str | None, Decimal] = {
            str(merchant_id) if merchant_id is not None else None: balance
            for merchant_id, balance in Account.objects.filter(kind=kind).values_list(
                "merchant_id", "balance"
            )
        }
        for owner in sorted(set(expected) | set(actual), key=str):
            want = expected.get(owner, Decimal(0))
            have = actual.get(owner, Decimal(0))
            if want != have:
                problems.append(f"{owner or 'service'}:{kind} is {have}, deposits explain {want}")
    return problems


def _asked(port: Port[str, Callable[[], list[str]]]) -> list[str]:
    return [f"{name}: {problem}" for name, check in port.implementations() for problem in check()]


def wallet_invariants_check() -> InvariantReport:
    """Postings sum to zero per transfer; each balance equals the sum of its postings; no held
    balance is negative; no lock outlives its trade or cashout; escrow and collateral match the
    deposits in their hold; no asset is in two live deposits or behind two credits at once."""
    unbalanced = (
        Posting.objects.values("transfer_id")
        .annotate(total=Round(Sum("amount"), 2))
        .exclude(total=0)
        .values_list("transfer_id", flat=True)
    )
    sums = dict(
        Posting.objects.values("account_id")
        .annotate(total=Round(Sum("amount"), 2))
        .values_list("account_id", "total")
    )
    drifted = [
        f"{account}: balance {account.balance}, postings {sums.get(account.pk, Decimal(0))}"
        for account in Account.objects.all()
        if account.balance != sums.get(account.pk, Decimal(0))
    ]
    negative = [
        str(account)
        for account in Account.objects.filter(merchant__isnull=False, balance__lt=0).exclude(
            kind=Account.Kind.AVAILABLE
        )
    ]
    return InvariantReport(
        unbalanced_transfers=[str(t) for t in unbalanced],
        drifted_accounts=drifted,
        negative_held_accounts=negative,
        orphan_locks=_orphan_locks(),
        unexplained_balances=_unexplained_balances(),
        shared_assets=_asked(SHARED_ASSETS),
        doubled_credits=_asked(DOUBLED_CREDITS),
    )


def wallet_balance_summary(*, merchant: Merchant) -> WalletBalance:
    """``balance`` spendable now, ``pendingBalance`` locked for withdrawals and cashouts in
    flight, ``escrowBalance`` deposit value still in its hold."""
    balances = wallet_balances(merchant=merchant)
    return {
        "balance": balances[Account.Kind.AVAILABLE],
        "pendingBalance": balances[Account.Kind.LOCKED],
        "escrowBalance": balances[Account.Kind.ESCROW],
        "currency": "USD",
    }


# Each invariant ``wallet_invariants_check`` proves, by its name in the report, as staff read it.
INVARIANTS = {
    "unbalanced_transfers": "unbalanced transfers",
    "drifted_accounts": "accounts whose balance differs from their postings",
    "negative_held_accounts": "held accounts below zero",
    "orphan_locks": "locks without a live trade or cashout",
    "unexplained_balances": "held balances no deposit explains",
    "shared_assets": "assets in two live deposits",
    "doubled_credits": "credits without exactly one asset behind them",
}


@dataclass(frozen=True)
class WalletCheckResult:
    """The last run of the invariant check: when (the service clock), and how many problems it
    found under each invariant."""

    ran_at: datetime
    problems: dict[str, int]


def wallet_check_last() -> WalletCheckResult | None:
    """The newest stored run of the invariant check (``check_wallet``, beat's
    ``wallet.check_invariants``), or None when none is: what the metrics export and the alerts
    read (docs/ops/runbooks)."""
    check = WalletCheck.objects.order_by("-ran_at", "-id").first()
    if check is None:
        return None
    return WalletCheckResult(
        ran_at=check.ran_at,
        problems={name: len(found) for name, found in check.problems.items()},
    )


@dataclass(frozen=True)
class StatementLine:
    """One posting on one of the merchant's accounts: the money that moved and the balance of
    that account after it."""

    at: datetime
    account: str
    kind: str
    reference: str
    memo: str
    transfer_id: uuid.UUID
    amount: Decimal
    balance: Decimal


@dataclass(frozen=True)
class AccountDay:
    account: str
    opening: Decimal
    closing: Decimal


@dataclass(frozen=True)
class Statement:
    """A merchant's day (UTC, by the time each transfer was posted): each account's opening
    and closing balance, and every movement between them in the order they were posted."""

    merchant: Merchant
    day: date
    starts: datetime
    ends: datetime
    accounts: list[AccountDay]
    lines: list[StatementLine]


def wallet_statement(*, merchant: Merchant, day: date) -> Statement:
    """The statement of ``day``, read from the postings alone, in one snapshot: opening is
    the sum of each account's postings before the day, closing before its end, and the lines
    the postings between (so opening plus the lines is closing)."""
    starts = datetime.combine(day, time.min, tzinfo=UTC)
    ends = starts + timedelta(days=1)
    mine = Posting.objects.filter(account__merchant=merchant)
    with snapshot_read():
        sums = {
            row["account__kind"]: row
            for row in mine.filter(transfer__created_at__lt=ends)
            .values("account__kind")
            .annotate(
                opening=Sum("amount", filter=Q(transfer__created_at__lt=starts), default=ZERO),
                closing=Sum("amount", default=ZERO),
            )
            .order_by()
        }
        moved = list(
            mine.filter(transfer__created_at__gte=starts, transfer__created_at__lt=ends)
            .order_by("transfer__created_at", "transfer_id", "account__kind")
            .values_list(
                "transfer__created_at",
                "account__kind",
                "transfer__kind",
                "transfer__cause_type",
                "transfer__cause_id",
                "transfer__memo",
                "transfer_id",
                "amount",
            )
        )
    accounts = [
        AccountDay(
            kind,
            *((sums[kind]["opening"], sums[kind]["closing"]) if kind in sums else (ZERO, ZERO)),
        )
        for kind in Account.MERCHANT_KINDS
    ]
    running = {account.account: account.opening for account in accounts}
    lines = []
    for at, account, kind, cause_type, cause_id, memo, transfer_id, amount in moved:
        running[account] += amount
        reference = f"{cause_type}:{cause_id}"
        lines.append(
            StatementLine(at, account, kind, reference, memo, transfer_id, amount, running[account])
        )
    return Statement(merchant, day, starts, ends, accounts, lines)
