"""GET /v1/ledger/transactions (contract 4.12): rows, filters, dates, the 24-hour rule,
pagination, refusals and isolation between merchants."""

import time
import types
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from core.json import iso_ms
from ledger.models import Funding
from merchants import ratelimits
from merchants.models import Scope
from tests.factories import add_api_key, assert_error, make_actor
from tests.ledger.conftest import LIST, data, fund, ids, ledger
from wallet.models import Transfer
from wallet.services import wallet_admin_credit, wallet_admin_debit

pytestmark = pytest.mark.django_db

MAY_1 = datetime(2026, 5, 1, tzinfo=UTC)


def at(day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 5, day, hour, minute, second, tzinfo=UTC)


def admin_credit(actor, amount: str, created_at: datetime | None = None) -> Transfer:
    transfer = wallet_admin_credit(merchant=actor.merchant, amount=Decimal(amount), reason="t")
    if created_at is not None:
        Transfer.objects.filter(pk=transfer.pk).update(created_at=created_at)
    return transfer


class TestRows:
    def test_a_crypto_withdrawal_row_has_every_field_of_the_contract(self, api, alice):
        funding = fund(
            alice,
            type="WITHDRAWAL",
            status="PENDING",
            amount="125.50",
            fee=Decimal("1.25"),
            amount_crypto=Decimal("124.25"),
            token="USDT",
            chain="ETH",
            address="0x52908400098527886E0F7030069857D2E4169EE7",
            txn_hash="0xabc123",
            created_at=at(3, 10),
        )

        [row] = ledger(api, alice)["items"]

        assert row == {
            "id": str(funding.id),
            "type": "WITHDRAWAL",
            "status": "PENDING",
            "amount": {
                "usd": Decimal("125.50"),
                "crypto": "124.250000",
                "token": "USDT",
                "chain": "ETH",
            },
            "fee": Decimal("1.25"),
            "address": "0x52908400098527886E0F7030069857D2E4169EE7",
            "txnHash": "0xabc123",
            "timestamps": {
                "created": "2026-05-03T10:00:00.000Z",
                "completed": None,
                "updated": iso_ms(funding.updated_at),
            },
        }

    def test_money_is_printed_with_its_cents(self, api, alice):
        fund(alice, amount="7.10", created_at=at(3))

        raw = api.get(LIST, headers=alice.headers).content.decode()

        assert '"usd":7.10' in raw
        assert '"fee":0.00' in raw
        assert '"crypto":"0.000000"' in raw

    def test_a_completed_funding_carries_its_completion_time(self, api, alice):
        funding = fund(alice, status="COMPLETED")

        [row] = ledger(api, alice)["items"]

        assert funding.completed_at is not None
        assert row["timestamps"]["completed"] == iso_ms(funding.completed_at)

    def test_staff_credits_and_debits_are_posted_admin_rows(self, api, alice):
        credit = admin_credit(alice, "50.00")
        debit = wallet_admin_debit(merchant=alice.merchant, amount=Decimal("20.00"), reason="fix")

        items = ledger(api, alice)["items"]

        assert [row["id"] for row in items] == [str(debit.id), str(credit.id)]
        created = iso_ms(debit.created_at)
        assert items[0] == {
            "id": str(debit.id),
            "type": "ADMIN_DEBIT",
            "status": "POSTED",
            "amount": {"usd": Decimal("20.00"), "crypto": "0", "token": None, "chain": None},
            "fee": Decimal("0.00"),
            "address": None,
            "txnHash": None,
            "timestamps": {"created": created, "completed": created, "updated": created},
        }
        assert items[1]["type"] == "ADMIN_CREDIT"
        assert items[1]["amount"]["usd"] == Decimal("50.00")

    def test_trade_settlements_and_other_wallet_moves_are_not_rows(self, api, alice):
        from wallet.services import wallet_lock, wallet_release

        admin_credit(alice, "100.00")
        wallet_lock(merchant=alice.merchant, amount=Decimal(30), cause_type="t", cause_id="1")
        wallet_release(merchant=alice.merchant, amount=Decimal(30), cause_type="t", cause_id="1")

        assert [row["type"] for row in ledger(api, alice)["items"]] == ["ADMIN_CREDIT"]

    def test_blank_on_chain_fields_are_null(self, api, alice):
        fund(alice, type="INTERNAL_TRANSFER", amount="-5.00")

        [row] = ledger(api, alice)["items"]

        assert row["amount"] == {
            "usd": Decimal("-5.00"),
            "crypto": "0.000000",
            "token": None,
            "chain": None,
        }
        assert row["address"] is None
        assert row["txnHash"] is None


class TestOrder:
    def test_newest_first_across_fundings_and_admin_rows(self, api, alice):
        old = fund(alice, created_at=at(1))
        credit = admin_credit(alice, "5.00", created_at=at(2))
        new = fund(alice, type="REFUND", created_at=at(3))

        assert ids(ledger(api, alice)) == [str(new.id), str(credit.id), str(old.id)]

    def test_rows_created_at_the_same_moment_are_ordered_by_id_descending(self, api, alice):
        same = [fund(alice, created_at=at(2)) for _ in range(4)]
        credit = admin_credit(alice, "5.00", created_at=at(2))

        expected = sorted([str(f.id) for f in same] + [str(credit.id)], reverse=True)
        assert ids(ledger(api, alice)) == expected


class TestTypeFilter:
    @pytest.fixture
    def rows(self, alice) -> dict[str, str]:
        made = {kind: str(fund(alice, type=kind).id) for kind in Funding.Type.values}
        made["ADMIN_CREDIT"] = str(admin_credit(alice, "5.00").id)
        made["ADMIN_DEBIT"] = str(
            wallet_admin_debit(merchant=alice.merchant, amount=Decimal(1), reason="t").id
        )
        return made

    @pytest.mark.parametrize("kind", ["DEPOSIT", "WITHDRAWAL"])
    def test_deposit_and_withdrawal_leave_admin_rows_out(self, api, alice, rows, kind):
        assert ids(ledger(api, alice, type=kind)) == [rows[kind]]

    @pytest.mark.parametrize("kind", ["REFUND", "INTERNAL_TRANSFER"])
    def test_refund_and_internal_transfer_keep_admin_rows(self, api, alice, rows, kind):
        page = ledger(api, alice, type=kind)

        assert sorted(ids(page)) == sorted([rows[kind], rows["ADMIN_CREDIT"], rows["ADMIN_DEBIT"]])
        assert page["pagination"]["total"] == 3

    def test_without_a_type_every_row_is_listed(self, api, alice, rows):
        assert sorted(ids(ledger(api, alice))) == sorted(rows.values())

    @pytest.mark.parametrize("kind", ["ADMIN_CREDIT", "ADMIN_DEBIT"])
    def test_an_admin_kind_lists_only_those_staff_rows(self, api, alice, bob, rows, kind):
        admin_credit(bob, "7.00")

        page = ledger(api, alice, type=kind)

        assert ids(page) == [rows[kind]]
        assert page["pagination"]["total"] == 1
        assert page["items"][0]["type"] == kind

    def test_an_admin_kind_ignores_the_status_filter_as_every_admin_row_does(
        self, api, alice, rows
    ):
        assert ids(ledger(api, alice, type="ADMIN_CREDIT", status="PENDING")) == [
            rows["ADMIN_CREDIT"]
        ]


class TestStatusFilter:
    def test_only_fundings_of_that_status_and_every_admin_row(self, api, alice):
        pending = fund(alice, status="PENDING")
        fund(alice, status="COMPLETED")
        fund(alice, status="FAILED")
        credit = admin_credit(alice, "5.00")

        page = ledger(api, alice, status="PENDING")

        assert sorted(ids(page)) == sorted([str(pending.id), str(credit.id)])

    def test_status_and_type_combine(self, api, alice):
        wanted = fund(alice, type="WITHDRAWAL", status="PENDING_ADMIN")
        fund(alice, type="DEPOSIT", status="PENDING_ADMIN")
        fund(alice, type="WITHDRAWAL", status="APPROVED")
        admin_credit(alice, "5.00")

        assert ids(ledger(api, alice, type="WITHDRAWAL", status="PENDING_ADMIN")) == [
            str(wanted.id)
        ]


class TestDates:
    @pytest.fixture
    def days(self, alice) -> dict[str, str]:
        """A row at midnight, mid-day and the last second of May 2, and either side of it."""
        return {
            "may1_late": str(fund(alice, created_at=at(1, 23, 59, 59)).id),
            "may2_midnight": str(fund(alice, created_at=at(2)).id),
            "may2_noon": str(fund(alice, created_at=at(2, 12)).id),
            "may2_credit": str(admin_credit(alice, "1.00", created_at=at(2, 13)).id),
            "may2_last": str(fund(alice, created_at=at(2, 23, 59, 59)).id),
            "may3_midnight": str(fund(alice, created_at=at(3)).id),
        }

    def names(self, page: dict, days: dict[str, str]) -> set[str]:
        by_id = {row_id: name for name, row_id in days.items()}
        return {by_id[row_id] for row_id in ids(page)}

    def test_start_date_is_inclusive_from_midnight_utc(self, api, alice, days):
        page = ledger(api, alice, startDate="2026-05-02")

        assert self.names(page, days) == {
            "may2_midnight",
            "may2_noon",
            "may2_credit",
            "may2_last",
            "may3_midnight",
        }

    def test_a_date_only_end_date_means_midnight_at_the_start_of_that_day(self, api, alice, days):
        page = ledger(api, alice, endDate="2026-05-02")

        assert self.names(page, days) == {"may1_late", "may2_midnight"}

    def test_a_date_time_end_date_includes_the_day(self, api, alice, days):
        page = ledger(api, alice, startDate="2026-05-02", endDate="2026-05-02T23:59:59.999Z")

        assert self.names(page, days) == {"may2_midnight", "may2_noon", "may2_credit", "may2_last"}

    def test_date_times_are_inclusive_at_both_ends(self, api, alice, days):
        page = ledger(api, alice, startDate="2026-05-02T12:00:00Z", endDate="2026-05-02T23:59:59Z")

        assert self.names(page, days) == {"may2_noon", "may2_credit", "may2_last"}

    def test_offsets_are_honoured_and_a_naive_date_time_is_utc(self, api, alice, days):
        with_offset = ledger(api, alice, startDate="2026-05-02T14:00:00+02:00")
        naive = ledger(api, alice, startDate="2026-05-02T12:00:00")

        expected = {"may2_noon", "may2_credit", "may2_last", "may3_midnight"}
        assert self.names(with_offset, days) == expected
        assert self.names(naive, days) == expected

    def test_the_same_date_at_both_ends_is_only_its_midnight(self, api, alice, days):
        page = ledger(api, alice, startDate="2026-05-02", endDate="2026-05-02")

        assert self.names(page, days) == {"may2_midnight"}


class TestInitiatedRule:
    """INITIATED fundings older than 24 hours (service clock) are hidden; nothing else is."""

    def test_an_initiated_funding_disappears_after_24_hours(self, api, alice, clock_advance):
        initiated = fund(alice, type="WITHDRAWAL", status="INITIATED")
        completed = fund(alice, type="WITHDRAWAL", status="COMPLETED")
        credit = admin_credit(alice, "5.00")

        clock_advance(24 * 3600 - 60)
        assert str(initiated.id) in ids(ledger(api, alice))

        clock_advance(120)
        page = ledger(api, alice)
        assert sorted(ids(page)) == sorted([str(completed.id), str(credit.id)])
        assert page["pagination"]["total"] == 2

    def test_asking_for_initiated_does_not_bring_old_ones_back(self, api, alice, clock_advance):
        old = fund(alice, type="WITHDRAWAL", status="INITIATED")
        clock_advance(25 * 3600)
        recent = fund(alice, type="WITHDRAWAL", status="INITIATED")

        assert ids(ledger(api, alice, type="WITHDRAWAL", status="INITIATED")) == [str(recent.id)]
        assert str(old.id) not in ids(ledger(api, alice))

    def test_the_rule_reads_the_service_clock_not_the_creation_argument(
        self, api, alice, clock_advance
    ):
        # Created "now" by the service clock, which runs two days ahead of the wall clock.
        clock_advance(48 * 3600)
        initiated = fund(alice, type="WITHDRAWAL", status="INITIATED")

        assert ids(ledger(api, alice)) == [str(initiated.id)]


class TestPagination:
    @pytest.fixture
    def seven(self, alice) -> list[str]:
        made = [str(fund(alice, created_at=at(1, hour)).id) for hour in range(6)]
        made.append(str(admin_credit(alice, "1.00", created_at=at(1, 6)).id))
        return list(reversed(made))  # newest first

    def test_defaults_are_limit_50_offset_0(self, api, alice, seven):
        page = ledger(api, alice)

        assert ids(page) == seven
        assert page["pagination"] == {"page": 1, "limit": 50, "total": 7, "totalPages": 1}

    @pytest.mark.parametrize(
        ("offset", "expected_slice", "page_number"),
        [(0, slice(0, 3), 1), (3, slice(3, 6), 2), (6, slice(6, 7), 3), (4, slice(4, 7), 2)],
    )
    def test_pages_of_three(self, api, alice, seven, offset, expected_slice, page_number):
        page = ledger(api, alice, limit=3, offset=offset)

        assert ids(page) == seven[expected_slice]
        assert page["pagination"] == {
            "page": page_number,
            "limit": 3,
            "total": 7,
            "totalPages": 3,
        }

    def test_past_the_end_is_empty_but_still_counts(self, api, alice, seven):
        page = ledger(api, alice, limit=3, offset=30)

        assert page["items"] == []
        assert page["pagination"] == {"page": 11, "limit": 3, "total": 7, "totalPages": 3}

    def test_total_follows_the_filters(self, api, alice, seven):
        fund(alice, type="REFUND", status="FAILED", created_at=at(1, 7))

        assert ledger(api, alice, limit=1)["pagination"]["total"] == 8
        assert ledger(api, alice, limit=1, type="DEPOSIT")["pagination"] == {
            "page": 1,
            "limit": 1,
            "total": 6,
            "totalPages": 6,
        }

    def test_an_empty_ledger(self, api, alice):
        page = ledger(api, alice)

        assert page == {
            "items": [],
            "pagination": {"page": 1, "limit": 50, "total": 0, "totalPages": 0},
        }

    def test_limit_100_and_more_rows_than_one_page(self, api, alice):
        for n in range(105):
            fund(alice, created_at=MAY_1 + timedelta(minutes=n))

        page = ledger(api, alice, limit=100)
        rest = ledger(api, alice, limit=100, offset=100)

        assert len(page["items"]) == 100
        assert len(rest["items"]) == 5
        assert page["pagination"] == {"page": 1, "limit": 100, "total": 105, "totalPages": 2}
        assert not set(ids(page)) & set(ids(rest))


class TestValidation:
    @pytest.mark.parametrize(
        ("query", "field"),
        [
            ({"limit": "0"}, "limit"),
            ({"limit": "101"}, "limit"),
            ({"limit": "ten"}, "limit"),
            ({"offset": "-1"}, "offset"),
            ({"offset": "1.5"}, "offset"),
            ({"type": "ADMIN_TRANSFER"}, "type"),
            ({"type": "deposit"}, "type"),
            ({"status": "POSTED"}, "status"),
            ({"status": "DONE"}, "status"),
            ({"startDate": "yesterday"}, "startDate"),
            ({"startDate": "2026-02-30"}, "startDate"),
            ({"endDate": "2026-05-01T25:00:00Z"}, "endDate"),
            ({"startDate": "2026-05-02", "endDate": "2026-05-01T23:59:59Z"}, "endDate"),
        ],
    )
    def test_a_bad_query_is_1001_naming_the_field(self, api, alice, query, field):
        error = assert_error(
            api.get(LIST, query, headers=alice.headers), 400, 1001, "VALIDATION_FAILED"
        )

        assert list(error["fields"]) == [field]

    def test_every_bad_field_is_named(self, api, alice):
        error = assert_error(
            api.get(LIST, {"limit": "0", "type": "X", "startDate": "?"}, headers=alice.headers),
            400,
            1001,
            "VALIDATION_FAILED",
        )

        assert set(error["fields"]) == {"limit", "type", "startDate"}

    def test_empty_parameters_count_as_not_given(self, api, alice):
        fund(alice)

        page = ledger(api, alice, type="", status="", startDate="", endDate="")

        assert len(page["items"]) == 1

    def test_unknown_query_parameters_are_ignored(self, api, alice):
        fund(alice)

        assert len(ledger(api, alice, page="3", sort="asc")["items"]) == 1


class TestAuthentication:
    def test_a_key_without_ledger_read_is_1908(self, api, alice):
        key = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,))

        assert_error(api.get(LIST, headers={"api-key": key}), 403, 1908, "INSUFFICIENT_SCOPE")

    def test_an_admin_key_is_1300_even_with_ledger_read(self, api, alice):
        key = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,), is_admin=True)

        assert key.startswith("tsa_")
        assert_error(
            api.get(LIST, headers={"api-key": key}), 403, 1300, "MERCHANT_API_KEY_REQUIRED"
        )

    def test_a_ledger_only_key_reads_the_ledger(self, api, alice):
        key = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,))
        fund(alice)

        assert len(data(api.get(LIST, headers={"api-key": key}))["items"]) == 1

    def test_a_bearer_header_alone_reaches_the_key_check(self, api, alice):
        response = api.get(LIST, headers={"Authorization": "Bearer something"})

        assert_error(response, 401, 1900, "MISSING_API_KEY")

    def test_nothing_at_all_is_1100(self, api):
        assert_error(api.get(LIST), 401, 1100, "UNAUTHORIZED")

    def test_a_bearer_header_beside_the_key_changes_nothing(self, api, alice):
        fund(alice)
        headers = {**alice.headers, "Authorization": "Bearer something"}

        assert api.get(LIST, headers=headers).status_code == 200


class TestIsolation:
    def test_a_merchant_sees_only_its_own_rows(self, api, alice, bob):
        mine = fund(alice)
        alices_credit = admin_credit(alice, "9.00")
        theirs = fund(bob)
        bobs_credit = admin_credit(bob, "3.00")

        alices = ledger(api, alice)
        bobs = ledger(api, bob)

        assert sorted(ids(alices)) == sorted([str(mine.id), str(alices_credit.id)])
        assert sorted(ids(bobs)) == sorted([str(theirs.id), str(bobs_credit.id)])
        assert alices["pagination"]["total"] == 2
        assert bobs["pagination"]["total"] == 2

    def test_an_empty_merchant_sees_nothing_of_a_busy_one(self, api, alice):
        fund(alice)
        admin_credit(alice, "9.00")
        carol = make_actor(name="Carol")

        assert ledger(api, carol)["pagination"]["total"] == 0


class TestRateLimit:
    def test_list_and_lookup_share_the_ledger_budget(self, api, alice, monkeypatch):
        # Mid-minute, frozen: the fixed window cannot roll over during the test.
        frozen = (int(time.time()) // 60) * 60 + 30.0
        monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: frozen))
        unverified = make_actor(name="Small", is_verified=False)
        funding = fund(unverified)
        for _ in range(9):
            assert api.get(LIST, headers=unverified.headers).status_code == 200
        lookup = api.get(f"{LIST}/{funding.id}", headers=unverified.headers)
        assert lookup.status_code == 200
        assert lookup["X-RateLimit-Limit"] == "10"
        assert lookup["X-RateLimit-Remaining"] == "0"

        refused = api.get(LIST, headers=unverified.headers)

        assert_error(refused, 429, 1005, "RATE_LIMITED")
        assert int(refused["Retry-After"]) >= 1
        # Another merchant's budget is its own.
        assert api.get(LIST, headers=alice.headers).status_code == 200
