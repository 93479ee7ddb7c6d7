"""PostgreSQL itself keeps the books: a transfer whose postings do not sum to zero cannot commit,
postings can never change, held balances can never go negative."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from core import clock
from tests.factories import make_actor
from wallet.models import Account, Posting, Transfer
from wallet.services import account_get, wallet_admin_credit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def accounts() -> tuple[Account, Account]:
    merchant = make_actor(name="Ledger shop").merchant
    return (
        account_get(merchant=merchant, kind=Account.Kind.AVAILABLE),
        account_get(merchant=None, kind=Account.Kind.WORLD),
    )


def transfer(memo: str) -> Transfer:
    return Transfer.objects.create(
        kind="TEST", cause_type="test", cause_id=memo, memo=memo, created_at=clock.now()
    )


def commit_legs(legs: list[tuple[Account, str, str]]) -> None:
    """One transaction inserting postings ``(account, transfer memo, amount)`` directly."""
    with transaction.atomic():
        transfers: dict[str, Transfer] = {}
        for account, memo, amount in legs:
            if memo not in transfers:
                transfers[memo] = transfer(memo)
            Posting.objects.create(
                transfer=transfers[memo], account=account, amount=Decimal(amount)
            )
        # Inside the transaction nothing complains yet: the check is deferred to commit.
        assert Posting.objects.count() == len(legs)


@pytest.mark.parametrize(
    "amounts", [("10.00", "-5.00"), ("10.00",), ("-0.01",), ("10.00", "-10.00", "0.01")]
)
def test_postings_that_do_not_sum_to_zero_fail_at_commit(accounts, amounts):
    legs = [(accounts[n % 2], "unbalanced", amount) for n, amount in enumerate(amounts)]
    with pytest.raises(IntegrityError, match="does not balance"):
        commit_legs(legs)
    assert not Transfer.objects.filter(kind="TEST").exists()
    assert not Posting.objects.exists()


def test_each_transfer_must_balance_on_its_own(accounts):
    available, world = accounts
    with pytest.raises(IntegrityError, match="does not balance"):
        commit_legs([(available, "first", "10.00"), (world, "second", "-10.00")])
    assert not Posting.objects.exists()


def test_a_balanced_transfer_commits_even_if_built_leg_by_leg(accounts):
    available, world = accounts
    commit_legs(
        [
            (available, "balanced", "10.00"),
            (world, "balanced", "-4.00"),
            (world, "balanced", "-6.00"),
        ]
    )
    assert sorted(Posting.objects.values_list("amount", flat=True)) == [
        Decimal("-6.00"),
        Decimal("-4.00"),
        Decimal("10.00"),
    ]


def test_postings_cannot_be_updated_or_deleted():
    merchant = make_actor(name="Immutable shop").merchant
    credit = wallet_admin_credit(merchant=merchant, amount=Decimal("25.00"), reason="test")
    posting = Posting.objects.filter(transfer=credit, amount__gt=0).get()

    attempts = [
        lambda: Posting.objects.filter(pk=posting.pk).update(amount=Decimal("30.00")),
        lambda: Posting.objects.filter(transfer=credit).update(amount=Decimal("0.01")),
        lambda: Posting.objects.filter(pk=posting.pk).delete(),
        lambda: Posting.objects.filter(transfer=credit).delete(),
    ]

    def raw_update() -> None:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE wallet_posting SET account_id = account_id")

    for attempt in [*attempts, raw_update]:
        with pytest.raises(IntegrityError, match="immutable"), transaction.atomic():
            attempt()
    assert sorted(Posting.objects.filter(transfer=credit).values_list("amount", flat=True)) == [
        Decimal("-25.00"),
        Decimal("25.00"),
    ]


def test_held_balances_cannot_go_negative():
    merchant = make_actor(name="Held shop").merchant
    for kind in (Account.Kind.LOCKED, Account.Kind.ESCROW, Account.Kind.COLLATERAL):
        held = account_get(merchant=merchant, kind=kind)
        with pytest.raises(IntegrityError), transaction.atomic():
            Account.objects.filter(pk=held.pk).update(balance=Decimal("-0.01"))
    available = account_get(merchant=merchant, kind=Account.Kind.AVAILABLE)
    with transaction.atomic():  # only spendable money may go below zero (a clawback)
        Account.objects.filter(pk=available.pk).update(balance=Decimal("-0.01"))
    assert Account.objects.get(pk=available.pk).balance == Decimal("-0.01")
