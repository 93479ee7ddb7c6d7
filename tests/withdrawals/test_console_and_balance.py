"""The wallet balance endpoint, the staff console's force-cancel with its audit, and the
invariant that no lock outlives its trade."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model

from core.models import StaffAction
from merchants.models import Scope
from tests.factories import add_api_key, assert_error, trade_url
from tests.withdrawals.conftest import make_listing, money, ok_data, sandbox_event, wallet_clean
from trading.models import Trade, TradeEvent, TradeItem
from wallet.selectors import wallet_invariants_check

pytestmark = pytest.mark.django_db


def buy(desk, actor, catalog_item, price: str = "10.00") -> dict:
    listing = make_listing(catalog_item, price)
    gross = (Decimal(price) * Decimal("1.05")).quantize(Decimal("0.01"))
    return ok_data(
        desk.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": gross}]},
            headers=actor.headers,
        )
    )


class TestBalance:
    def test_spendable_locked_and_escrow_per_merchant(self, desk, alice_funded, bob, catalog_item):
        buy(desk, alice_funded, catalog_item)  # approved and ordered: 10.50 stays locked

        data = ok_data(desk.get("/v1/wallets/me/balance", headers=alice_funded.headers))

        assert data == {
            "balance": Decimal("989.50"),
            "pendingBalance": Decimal("10.50"),
            "escrowBalance": Decimal("0.00"),
            "currency": "USD",
        }
        bobs = ok_data(desk.get("/v1/wallets/me/balance", headers=bob.headers))
        assert bobs["balance"] == Decimal("0.00")

    def test_either_scope_reads_it(self, desk, alice_funded):
        for scope in (Scope.CORE_ACCESS, Scope.LEDGER_READ):
            key = add_api_key(alice_funded.merchant, scopes=[scope])
            response = desk.get("/v1/wallets/me/balance", headers={"api-key": key})
            assert response.status_code == 200

    def test_a_key_without_scopes_is_refused(self, desk, alice_funded):
        key = add_api_key(alice_funded.merchant, scopes=[])
        response = desk.get("/v1/wallets/me/balance", headers={"api-key": key})
        assert_error(response, 403, 1903, "API_KEY_SCOPE_DENIED")


class TestForceCancel:
    @pytest.fixture
    def staff(self, client):
        user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-ops-123")
        client.force_login(user)
        return client

    def test_refunds_undelivered_items_and_leaves_an_audit_trail(
        self, staff, desk, alice_funded, catalog_item, django_capture_on_commit_callbacks
    ):
        trade = buy(desk, alice_funded, catalog_item)
        before = money(alice_funded)

        with django_capture_on_commit_callbacks(execute=True):
            response = staff.post(
                f"/admin/trading/trade/{trade['id']}/staff/cancel_trade/",
                {"reason": "ticket 4411"},
            )

        assert response.status_code == 302
        row = Trade.objects.get(pk=trade["id"])
        assert row.status == "canceled"
        assert money(alice_funded)["available"] == before["available"] + Decimal("10.50")
        assert money(alice_funded)["locked"] == Decimal("0.00")
        assert TradeEvent.objects.filter(trade=row, actor="staff:ops", kind="force_cancel").exists()
        action = StaffAction.objects.get(subject_type="trade", subject_id=str(row.pk))
        assert (action.user, action.action, action.reason) == ("ops", "cancel_trade", "ticket 4411")
        assert LogEntry.objects.filter(object_id=str(row.pk), user__username="ops").exists()
        assert wallet_clean()

    def test_delivered_items_are_left_alone(self, staff, desk, alice_funded, catalog_item):
        trade = buy(desk, alice_funded, catalog_item)
        sandbox_event(desk, alice_funded, trade["id"], "purchased")
        sandbox_event(desk, alice_funded, trade["id"], "accepted")

        staff.post(
            f"/admin/trading/trade/{trade['id']}/staff/cancel_trade/", {"reason": "asked to"}
        )

        assert TradeItem.objects.get(trade_id=trade["id"]).status == "hold"
        assert not StaffAction.objects.exists()  # refused: nothing left to cancel
        assert money(alice_funded)["locked"] == Decimal("10.50")

    def test_the_trade_page_shows_items_events_webhooks_and_transfers(
        self, staff, desk, alice_funded, catalog_item
    ):
        trade = buy(desk, alice_funded, catalog_item)

        page = staff.get(f"/admin/trading/trade/{trade['id']}/change/").content.decode()

        assert "trade.initiated" in page
        assert "LOCK" in page
        assert "approved" in page


class TestLockInvariant:
    def test_a_lock_left_on_an_ended_item_is_reported(self, desk, alice_funded, catalog_item):
        trade = buy(desk, alice_funded, catalog_item)
        assert wallet_invariants_check().clean
        # A bug that ended the item without its refund:
        TradeItem.objects.filter(trade_id=trade["id"]).update(status="failed")

        report = wallet_invariants_check()

        assert not report.clean
        assert any("holds 10.50" in problem for problem in report.orphan_locks)

    def test_locked_money_nobody_holds_is_reported(self, desk, alice_funded, catalog_item):
        trade = buy(desk, alice_funded, catalog_item)
        TradeItem.objects.filter(trade_id=trade["id"]).update(locked=Decimal("0.00"))

        report = wallet_invariants_check()

        assert any("locked 10.50" in problem for problem in report.orphan_locks)
