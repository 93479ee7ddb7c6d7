"""SQLite keeps the books too (wallet migration 0004): a transfer whose postings do not sum to
zero cannot commit, however its rows were written; a balanced one commits, even built leg by
leg; postings cannot change. The guard acts at COMMIT, so most of these tests commit for real,
outside any test transaction (``committing``), and remove what they committed. The two marked
``django_db`` run inside one; they also make pytest-django create the test database, which it
does only for a session holding such a test."""

import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction

from core import clock
from wallet.models import Account, Posting, Transfer
from wallet.services import Move, account_get, transfer_post

KIND = "GUARD_TEST"
# SQLite's answer to a COMMIT with a deferred foreign key unmet: here, a transfer unbalanced.
REFUSED = "FOREIGN KEY constraint failed"
# Service accounts only: no merchant's balance, escrow or collateral is touched.
WORLD, REVENUE, SUPPLIER = Account.Kind.WORLD, Account.Kind.REVENUE, Account.Kind.SUPPLIER


@pytest.fixture
def committing(django_db_setup: None, django_db_blocker: Any) -> Iterator[dict[str, int]]:
    """Database access without a test transaction; the service accounts' ids by kind. What a
    test committed is taken away after it (deleting a whole transfer's postings is allowed)."""
    with django_db_blocker.unblock():
        yield {
            kind: account_get(merchant=None, kind=kind).pk for kind in (WORLD, REVENUE, SUPPLIER)
        }
        with transaction.atomic():
            Posting.objects.filter(transfer__kind=KIND).delete()
            Transfer.objects.filter(kind=KIND).delete()


def insert_transfer() -> str:
    transfer_id = uuid.uuid4().hex
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO wallet_transfer (id, kind, cause_type, cause_id, memo, created_at)"
            " VALUES (%s, %s, 'test', 'raw', '', %s)",
            [transfer_id, KIND, clock.now().isoformat()],
        )
    return transfer_id


def insert_legs(transfer_id: str, legs: list[tuple[int, str]]) -> None:
    """The legs ``(account id, amount)`` in one INSERT, as ``bulk_create`` writes them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO wallet_posting (transfer_id, account_id, amount) VALUES "
            + ", ".join(["(%s, %s, %s)"] * len(legs)),
            [value for account, amount in legs for value in (transfer_id, account, amount)],
        )


def commit(*writes: Callable[[], object]) -> None:
    """The writes in one transaction, then COMMIT (where the guard acts)."""
    with transaction.atomic():
        for write in writes:
            write()


def nothing_left() -> bool:
    return (
        not Transfer.objects.filter(kind=KIND).exists()
        and not Posting.objects.filter(transfer__kind=KIND).exists()
    )


@pytest.mark.parametrize(
    "amounts",
    [("10.00", "-5.00"), ("10.00",), ("-0.01",), ("10.00", "-10.00", "0.01"), ("0.10", "-0.29")],
)
def test_postings_that_do_not_sum_to_zero_fail_at_commit(committing, amounts):
    accounts = [committing[WORLD], committing[REVENUE]]
    legs = [(accounts[n % 2], amount) for n, amount in enumerate(amounts)]
    written = []

    def write_and_count() -> None:
        insert_legs(transfer_id := insert_transfer(), legs)
        # Inside the transaction nothing complains yet: the check waits for the commit.
        written.append(Posting.objects.filter(transfer_id=transfer_id).count())

    with pytest.raises(IntegrityError, match=REFUSED):
        commit(write_and_count)

    assert written == [len(amounts)]
    assert nothing_left()


def test_each_transfer_must_balance_on_its_own(committing):
    with pytest.raises(IntegrityError, match=REFUSED):
        commit(
            lambda: insert_legs(insert_transfer(), [(committing[WORLD], "-10.00")]),
            lambda: insert_legs(insert_transfer(), [(committing[REVENUE], "10.00")]),
        )
    assert nothing_left()


def test_a_single_unbalanced_statement_outside_a_transaction_is_refused(committing):
    transfer_id = insert_transfer()  # committed at once (autocommit)

    with pytest.raises(IntegrityError, match=REFUSED):
        insert_legs(transfer_id, [(committing[WORLD], "-3.00"), (committing[REVENUE], "2.00")])

    assert not Posting.objects.filter(transfer_id=transfer_id).exists()


def test_a_balanced_transfer_commits_in_one_statement_or_leg_by_leg(committing):
    world, revenue, supplier = committing[WORLD], committing[REVENUE], committing[SUPPLIER]
    with transaction.atomic():
        in_one = insert_transfer()
        # Cents that floats do not add exactly: 0.10 + 0.20 - 0.30 is not 0.0 as a double.
        insert_legs(in_one, [(world, "-0.30"), (revenue, "0.10"), (supplier, "0.20")])
        leg_by_leg = insert_transfer()
        for account, amount in ((world, "10.00"), (revenue, "-4.00"), (supplier, "-6.00")):
            insert_legs(leg_by_leg, [(account, amount)])

    assert sorted(Posting.objects.filter(transfer_id=in_one).values_list("amount", flat=True)) == [
        Decimal("-0.30"),
        Decimal("0.10"),
        Decimal("0.20"),
    ]
    assert Posting.objects.filter(transfer_id=leg_by_leg).count() == 3


def test_the_services_multi_leg_transfer_commits(committing):
    world, revenue, supplier = (
        Account.objects.get(pk=committing[kind]) for kind in (WORLD, REVENUE, SUPPLIER)
    )
    moves = [
        Move(source=world, target=revenue, amount=Decimal("10.00")),
        Move(source=world, target=supplier, amount=Decimal("4.00")),
    ]
    with transaction.atomic():
        transfer = transfer_post(kind=KIND, cause_type="test", cause_id="service", moves=moves)
    try:
        assert sorted(transfer.postings.values_list("amount", flat=True)) == [
            Decimal("-14.00"),
            Decimal("4.00"),
            Decimal("10.00"),
        ]
    finally:  # the balances back where they were; the cleanup removes both transfers
        with transaction.atomic():
            transfer_post(
                kind=KIND,
                cause_type="test",
                cause_id="service reversed",
                moves=[Move(source=m.target, target=m.source, amount=m.amount) for m in moves],
            )


def test_a_posting_cannot_leave_a_committed_transfer_unbalanced(committing):
    with transaction.atomic():
        transfer_id = insert_transfer()
        insert_legs(transfer_id, [(committing[WORLD], "-5.00"), (committing[REVENUE], "5.00")])
    posting = Posting.objects.filter(transfer_id=transfer_id, amount__gt=0).get()

    with pytest.raises(IntegrityError, match=REFUSED):
        commit(Posting.objects.filter(pk=posting.pk).delete)

    assert Posting.objects.filter(transfer_id=transfer_id).count() == 2


def service_accounts() -> list[int]:
    return [account_get(merchant=None, kind=kind).pk for kind in (WORLD, REVENUE)]


@pytest.mark.django_db
def test_an_unbalanced_transfer_fails_the_check_a_test_transaction_ends_with():
    """What a test transaction (never committed) reports instead: Django's TestCase ends with
    the same foreign key check SQLite runs at COMMIT."""
    world, revenue = service_accounts()
    transfer_id = insert_transfer()
    insert_legs(transfer_id, [(world, "-5.00")])
    with pytest.raises(IntegrityError, match="wallet_unbalanced_transfer"):
        connection.check_constraints()

    insert_legs(transfer_id, [(revenue, "5.00")])

    connection.check_constraints()


@pytest.mark.django_db
def test_postings_cannot_be_updated():
    transfer_id = insert_transfer()
    world, revenue = service_accounts()
    insert_legs(transfer_id, [(world, "-5.00"), (revenue, "5.00")])

    with pytest.raises(IntegrityError, match="postings are immutable"), transaction.atomic():
        Posting.objects.filter(transfer_id=transfer_id).update(account_id=world)
    with pytest.raises(IntegrityError, match="postings are immutable"), transaction.atomic():
        Posting.objects.filter(transfer_id=transfer_id, amount__gt=0).update(amount=Decimal(6))

    assert sorted(
        Posting.objects.filter(transfer_id=transfer_id).values_list("account_id", "amount")
    ) == sorted([(world, Decimal("-5.00")), (revenue, Decimal("5.00"))])
