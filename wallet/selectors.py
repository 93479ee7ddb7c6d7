from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from merchants.models import Merchant
from wallet.models import Account, Posting


def wallet_balances(*, merchant: Merchant) -> dict[str, Decimal]:
    rows = Account.objects.filter(merchant=merchant).values_list("kind", "balance")
    balances: dict[str, Decimal] = {str(kind): Decimal("0.00") for kind in Account.MERCHANT_KINDS}
    balances.update(dict(rows))
    return balances


@dataclass(frozen=True)
class InvariantReport:
    unbalanced_transfers: list[str]
    drifted_accounts: list[str]
    negative_held_accounts: list[str]

    @property
    def clean(self) -> bool:
        return not (
            self.unbalanced_transfers or self.drifted_accounts or self.negative_held_accounts
        )


def wallet_invariants_check() -> InvariantReport:
    """Postings sum to zero per transfer; each balance equals the sum of its postings."""
    unbalanced = (
        Posting.objects.values("transfer_id")
        .annotate(total=Sum("amount"))
        .exclude(total=0)
        .values_list("transfer_id", flat=True)
    )
    sums = dict(
        Posting.objects.values("account_id")
        .annotate(total=Sum("amount"))
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
    )


def wallet_balance_summary(*, merchant: Merchant) -> dict[str, object]:
    """``balance`` spendable now, ``pendingBalance`` locked for withdrawals and cashouts in
    flight, ``escrowBalance`` deposit value still in its hold."""
    balances = wallet_balances(merchant=merchant)
    return {
        "balance": balances[Account.Kind.AVAILABLE],
        "pendingBalance": balances[Account.Kind.LOCKED],
        "escrowBalance": balances[Account.Kind.ESCROW],
        "currency": "USD",
    }
