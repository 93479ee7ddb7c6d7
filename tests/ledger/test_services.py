"""The funding services the money paths call, and the staff moves behind the console."""

import uuid
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from core import clock
from ledger.models import Funding
from ledger.services import (
    INTERNAL_TRANSFER_SOURCE,
    funding_internal_transfer,
    funding_record,
    funding_status_set,
)
from wallet.models import Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import (
    InsufficientFundsError,
    wallet_admin_credit,
    wallet_admin_debit,
    wallet_merchant_transfer,
)

pytestmark = pytest.mark.django_db


def record(merchant, source_id: str, **fields):
    values = {
        "type": "WITHDRAWAL",
        "status": "INITIATED",
        "amount_usd": Decimal("10.00"),
        "source_type": "crypto_withdrawal",
        "source_id": source_id,
    }
    values.update(fields)
    return funding_record(merchant=merchant, **values)


def available(actor) -> Decimal:
    return wallet_balances(merchant=actor.merchant)["available"]


class TestFundingRecord:
    def test_recording_a_source_twice_returns_the_first_row(self, alice):
        first = record(alice.merchant, "w1")
        again = record(alice.merchant, "w1", status="COMPLETED", amount_usd=Decimal(99))

        assert again.pk == first.pk
        assert again.status == "INITIATED"
        assert Funding.objects.count() == 1

    def test_a_refund_of_the_same_source_is_its_own_row(self, alice):
        withdrawal = record(alice.merchant, "w1")
        refund = record(alice.merchant, "w1", type="REFUND", status="COMPLETED")

        assert refund.pk != withdrawal.pk
        assert refund.completed_at is not None

    def test_one_source_may_have_a_row_per_merchant(self, alice, bob):
        first = record(alice.merchant, "shared", type="INTERNAL_TRANSFER")
        second = record(bob.merchant, "shared", type="INTERNAL_TRANSFER")

        assert first.pk != second.pk

    def test_the_database_refuses_a_second_row_of_a_source_for_a_merchant(self, alice):
        record(alice.merchant, "w1")
        now = clock.now()

        with pytest.raises(IntegrityError), transaction.atomic():
            Funding.objects.create(
                merchant=alice.merchant,
                type="WITHDRAWAL",
                status="PENDING",
                amount_usd=Decimal(1),
                source_type="crypto_withdrawal",
                source_id="w1",
                created_at=now,
                updated_at=now,
            )

    def test_only_an_internal_transfer_may_be_negative(self, alice):
        with pytest.raises(IntegrityError), transaction.atomic():
            record(alice.merchant, "neg", type="DEPOSIT", amount_usd=Decimal("-1.00"))

        assert record(alice.merchant, "neg", type="INTERNAL_TRANSFER", amount_usd=Decimal(-1))


class TestFundingStatusSet:
    def test_moves_a_funding_on_and_stamps_completion(self, alice):
        record(alice.merchant, "w1")

        changed = funding_status_set(
            source_type="crypto_withdrawal",
            source_id="w1",
            type="WITHDRAWAL",
            status="COMPLETED",
            txn_hash="0xfeed",
        )

        row = Funding.objects.get()
        assert changed == 1
        assert (row.status, row.txn_hash) == ("COMPLETED", "0xfeed")
        assert row.completed_at is not None

    def test_a_final_funding_stays_as_it_is(self, alice):
        record(alice.merchant, "w1", status="FAILED")

        changed = funding_status_set(
            source_type="crypto_withdrawal", source_id="w1", type="WITHDRAWAL", status="PENDING"
        )

        assert changed == 0
        assert Funding.objects.get().status == "FAILED"


class TestStaffMoves:
    def test_a_debit_takes_spendable_money_out(self, alice):
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal(50), reason="in")

        debit = wallet_admin_debit(merchant=alice.merchant, amount=Decimal(20), reason="out")

        assert debit.kind == "ADMIN_DEBIT"
        assert debit.memo == "out"
        assert available(alice) == Decimal("30.00")
        assert wallet_invariants_check().clean

    def test_a_debit_never_drives_available_below_zero(self, alice):
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal(50), reason="in")

        with pytest.raises(InsufficientFundsError):
            wallet_admin_debit(merchant=alice.merchant, amount=Decimal("50.01"), reason="out")

        assert available(alice) == Decimal("50.00")
        assert not Transfer.objects.filter(kind="ADMIN_DEBIT").exists()
        assert wallet_admin_debit(merchant=alice.merchant, amount=Decimal(50), reason="all")
        assert available(alice) == Decimal("0.00")
        assert wallet_invariants_check().clean

    def test_an_internal_transfer_is_one_balanced_transfer_and_a_funding_per_side(self, alice, bob):
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal(100), reason="in")

        moved = funding_internal_transfer(
            source=alice.merchant, target=bob.merchant, amount=Decimal("30.00"), reason="merge"
        )

        assert available(alice) == Decimal("70.00")
        assert available(bob) == Decimal("30.00")
        assert moved.transfer.kind == "INTERNAL_TRANSFER"
        assert (moved.transfer.cause_type, moved.transfer.cause_id) == (
            INTERNAL_TRANSFER_SOURCE,
            moved.id,
        )
        assert sorted(p.amount for p in moved.transfer.postings.all()) == [
            Decimal("-30.00"),
            Decimal("30.00"),
        ]
        rows = {row.merchant_id: row for row in Funding.objects.filter(source_id=moved.id)}
        assert rows[alice.merchant.pk].amount_usd == Decimal("-30.00")
        assert rows[bob.merchant.pk].amount_usd == Decimal("30.00")
        assert {row.status for row in rows.values()} == {"COMPLETED"}
        assert {row.type for row in rows.values()} == {"INTERNAL_TRANSFER"}
        assert wallet_invariants_check().clean

    def test_an_internal_transfer_that_would_overdraw_writes_nothing(self, alice, bob):
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal(10), reason="in")

        with pytest.raises(InsufficientFundsError):
            funding_internal_transfer(
                source=alice.merchant, target=bob.merchant, amount=Decimal("10.01"), reason="x"
            )

        assert available(alice) == Decimal("10.00")
        assert available(bob) == Decimal("0.00")
        assert not Funding.objects.exists()
        assert not Transfer.objects.filter(kind="INTERNAL_TRANSFER").exists()
        assert wallet_invariants_check().clean

    def test_a_merchant_cannot_transfer_to_itself(self, alice):
        with pytest.raises(ValueError, match="itself"):
            wallet_merchant_transfer(
                source=alice.merchant,
                target=alice.merchant,
                amount=Decimal(1),
                cause_type="t",
                cause_id=str(uuid.uuid4()),
            )
