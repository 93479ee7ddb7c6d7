"""GET /v1/ledger/transactions serves rendered pages kept under the merchant's ledger version
(``ledger.selectors.ledger_page_rendered``): every write of a ledger row is listed as soon as it
has committed, a page is never served past the moment one of its rows leaves the list, and a
lost version bump is seen at most ``PAGE_TTL_SECONDS`` late."""

import time
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core import clock
from core.ledger_version import ledger_version_bump
from ledger import selectors
from ledger.models import Funding
from ledger.services import funding_internal_transfer, funding_status_set
from tests.ledger.conftest import fund, ids, ledger
from wallet.services import wallet_admin_credit, wallet_admin_debit

pytestmark = pytest.mark.django_db


def statements(api, actor, **query: object) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        ledger(api, actor, **query)
    return [q["sql"] for q in captured.captured_queries]


class TestServedFromTheCache:
    def test_a_page_read_again_reads_no_ledger_row(self, api, alice):
        fund(alice)
        ledger(api, alice)

        assert not [sql for sql in statements(api, alice) if "ledger_funding" in sql]

    def test_each_query_is_a_page_of_its_own(self, api, alice):
        newest, older = fund(alice), fund(alice)
        older.created_at = newest.created_at.replace(year=2025)
        older.save()
        ledger(api, alice, limit=1)

        assert ids(ledger(api, alice, limit=1, offset=1)) == [str(older.id)]
        assert ids(ledger(api, alice, limit=1, type="WITHDRAWAL")) == []

    def test_merchants_never_share_a_page(self, api, alice, bob):
        fund(alice)
        ledger(api, alice)

        assert ledger(api, bob)["items"] == []


class TestWritesAreListedOnceCommitted:
    """Each writer of a ledger row bumps the merchant's version after its commit."""

    def test_a_recorded_funding(self, api, alice, django_capture_on_commit_callbacks):
        ledger(api, alice)

        with django_capture_on_commit_callbacks(execute=True):
            funding = fund(alice, type="DEPOSIT", status="PENDING")

        assert ids(ledger(api, alice)) == [str(funding.id)]

    def test_a_status_change(self, api, alice, django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            funding = fund(alice, type="DEPOSIT", status="PENDING")
        assert ledger(api, alice)["items"][0]["status"] == "PENDING"

        with django_capture_on_commit_callbacks(execute=True):
            funding_status_set(
                source_type=funding.source_type,
                source_id=funding.source_id,
                type=funding.type,
                status="COMPLETED",
            )

        assert ledger(api, alice)["items"][0]["status"] == "COMPLETED"

    def test_staff_credits_and_debits(self, api, alice, django_capture_on_commit_callbacks):
        ledger(api, alice)

        with django_capture_on_commit_callbacks(execute=True):
            credit = wallet_admin_credit(merchant=alice.merchant, amount=Decimal(5), reason="t")
        assert ids(ledger(api, alice)) == [str(credit.id)]
        with django_capture_on_commit_callbacks(execute=True):
            debit = wallet_admin_debit(merchant=alice.merchant, amount=Decimal(2), reason="t")

        assert ids(ledger(api, alice)) == [str(debit.id), str(credit.id)]

    def test_both_sides_of_an_internal_transfer(
        self, api, alice, bob, django_capture_on_commit_callbacks
    ):
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal(5), reason="t")
        ledger(api, alice)
        ledger(api, bob)

        with django_capture_on_commit_callbacks(execute=True):
            funding_internal_transfer(
                source=alice.merchant, target=bob.merchant, amount=Decimal(3), reason="t"
            )

        sent, received = ledger(api, alice)["items"][0], ledger(api, bob)["items"][0]
        assert (sent["type"], sent["amount"]["usd"]) == ("INTERNAL_TRANSFER", Decimal("-3.00"))
        assert (received["type"], received["amount"]["usd"]) == ("INTERNAL_TRANSFER", Decimal(3))

    def test_not_before_the_commit(self, api, alice, django_capture_on_commit_callbacks):
        """A reader that saw a new version before the write committed could keep the old rows
        under it: the version moves only after the commit."""
        ledger(api, alice)

        with django_capture_on_commit_callbacks(execute=False) as pending:
            fund(alice)
            assert ledger(api, alice)["items"] == []  # the kept page: nothing committed yet
        for callback in pending:
            callback()

        assert len(ledger(api, alice)["items"]) == 1

    def test_a_write_that_changes_nothing_keeps_the_version(
        self, api, alice, django_capture_on_commit_callbacks
    ):
        funding = fund(alice, type="DEPOSIT", status="COMPLETED")

        with django_capture_on_commit_callbacks(execute=False) as pending:
            fund(alice, type="DEPOSIT", status="COMPLETED", amount="1.00")  # another source
            funding_status_set(  # a final funding stays as it is
                source_type=funding.source_type,
                source_id=funding.source_id,
                type=funding.type,
                status="FAILED",
            )

        assert len(pending) == 1


class TestBoundedStaleness:
    def test_a_page_is_not_served_past_the_moment_a_row_leaves_it(self, api, alice, clock_advance):
        initiated = fund(alice, type="WITHDRAWAL", status="INITIATED")
        assert ids(ledger(api, alice)) == [str(initiated.id)]

        clock_advance(24 * 3600 + 1)

        page = ledger(api, alice)
        assert page["items"] == []
        assert page["pagination"]["total"] == 0

    def test_nor_before_the_moment_it_was_read(self, api, alice, clock_advance):
        """A clock set back (the sandbox's) shows again what it hid."""
        initiated = fund(alice, type="WITHDRAWAL", status="INITIATED")
        clock_advance(25 * 3600)
        assert ledger(api, alice)["items"] == []

        clock_advance(-2 * 3600)

        assert ids(ledger(api, alice)) == [str(initiated.id)]

    def test_a_lost_bump_is_seen_at_most_the_pages_lifetime_late(self, api, alice, monkeypatch):
        monkeypatch.setattr(selectors, "PAGE_TTL_SECONDS", 1)
        ledger(api, alice)
        # Written as if the cache had failed after the commit: no new version.
        Funding.objects.create(
            merchant=alice.merchant,
            type="DEPOSIT",
            status="COMPLETED",
            amount_usd=Decimal(1),
            source_type="test",
            source_id="lost-bump",
            created_at=clock.now(),
            updated_at=clock.now(),
        )
        assert ledger(api, alice)["items"] == []

        time.sleep(1.5)

        assert len(ledger(api, alice)["items"]) == 1

    def test_a_bump_of_another_merchant_changes_nothing_here(
        self, api, alice, bob, django_capture_on_commit_callbacks
    ):
        fund(alice)
        ledger(api, alice)
        with django_capture_on_commit_callbacks(execute=True):
            ledger_version_bump(merchant_id=bob.merchant.pk)

        assert not [sql for sql in statements(api, alice) if "ledger_funding" in sql]
