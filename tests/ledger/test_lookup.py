"""GET /v1/ledger/transactions/{transactionId}: one funding's row plus ``timestamps.expired``."""

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest

from core.json import iso_ms
from merchants.models import Scope
from tests.factories import add_api_key, assert_error
from tests.ledger.conftest import LIST, data, fund, ledger
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db


def lookup(api, actor, transaction_id: object):
    return api.get(f"{LIST}/{transaction_id}", headers=actor.headers)


class TestFound:
    def test_the_row_is_the_lists_row_plus_expired(self, api, alice):
        funding = fund(
            alice,
            type="DEPOSIT",
            status="COMPLETED",
            amount="40.00",
            amount_crypto=Decimal("40"),
            token="USDC",
            chain="SOL",
            address="So1anaAddre55",
            txn_hash="5igNature",
        )

        row = data(lookup(api, alice, funding.id))

        [listed] = ledger(api, alice)["items"]
        assert row == {**listed, "timestamps": {**listed["timestamps"], "expired": None}}
        assert row["amount"]["crypto"] == "40.000000"

    def test_an_initiated_funding_expires_24_hours_after_creation(self, api, alice):
        funding = fund(alice, type="WITHDRAWAL", status="INITIATED")

        row = data(lookup(api, alice, funding.id))

        assert row["timestamps"]["expired"] == iso_ms(funding.created_at + timedelta(hours=24))

    def test_an_initiated_funding_hidden_from_the_list_is_still_found(
        self, api, alice, clock_advance
    ):
        funding = fund(alice, type="WITHDRAWAL", status="INITIATED")
        clock_advance(30 * 3600)

        assert ledger(api, alice)["items"] == []
        row = data(lookup(api, alice, funding.id))
        assert row["status"] == "INITIATED"
        assert row["timestamps"]["expired"] == iso_ms(funding.created_at + timedelta(hours=24))

    @pytest.mark.parametrize("status", ["PENDING", "FAILED", "EXPIRED", "CANCELLED"])
    def test_other_statuses_never_expire(self, api, alice, status):
        funding = fund(alice, type="WITHDRAWAL", status=status)

        assert data(lookup(api, alice, funding.id))["timestamps"]["expired"] is None

    def test_an_upper_case_id_finds_the_same_funding(self, api, alice):
        funding = fund(alice)

        assert data(lookup(api, alice, str(funding.id).upper()))["id"] == str(funding.id)


class TestNotFound:
    def test_an_admin_row_id_is_3001(self, api, alice):
        credit = wallet_admin_credit(merchant=alice.merchant, amount=Decimal(5), reason="t")

        assert str(credit.id) in [row["id"] for row in ledger(api, alice)["items"]]
        assert_error(lookup(api, alice, credit.id), 404, 3001, "TRANSACTION_NOT_FOUND")

    @pytest.mark.parametrize("unknown", [uuid.uuid4(), "not-a-uuid", "1", "%20"])
    def test_an_unknown_id_is_3001(self, api, alice, unknown):
        fund(alice)

        assert_error(lookup(api, alice, unknown), 404, 3001, "TRANSACTION_NOT_FOUND")

    def test_another_merchants_funding_is_3001(self, api, alice, bob):
        alices = fund(alice)

        assert_error(lookup(api, bob, alices.id), 404, 3001, "TRANSACTION_NOT_FOUND")
        assert data(lookup(api, alice, alices.id))["id"] == str(alices.id)


class TestAuthentication:
    def test_same_scope_rules_as_the_list(self, api, alice):
        funding = fund(alice)
        core_only = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,))
        admin_key = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,), is_admin=True)
        path = f"{LIST}/{funding.id}"

        assert_error(api.get(path, headers={"api-key": core_only}), 403, 1908, "INSUFFICIENT_SCOPE")
        assert_error(
            api.get(path, headers={"api-key": admin_key}), 403, 1300, "MERCHANT_API_KEY_REQUIRED"
        )
        assert_error(api.get(path), 401, 1100, "UNAUTHORIZED")
