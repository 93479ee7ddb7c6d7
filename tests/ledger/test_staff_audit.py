"""Every staff action of the console leaves exactly one audit entry (Django's admin LogEntry)
naming the staff user and the object: merchants, keys, secrets, webhook re-sends, trade
cancels, catalog, per-game deposit pauses and maintenance mode. Deleting the records
staff must keep is not offered."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.messages import get_messages
from django.utils import timezone

from core.models import ServiceSettings
from merchants.models import ApiKey, ApiSecret, Merchant
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import webhook_event_emit
from tests.factories import trade_url
from tests.ledger.conftest import change_form_data
from tests.withdrawals.conftest import make_listing, ok_data
from trading.models import GameSettings, Trade

pytestmark = pytest.mark.django_db


def only_entry(obj, action_flag: int = CHANGE) -> LogEntry:
    """The one audit entry of ``obj``, by the console's staff user."""
    [entry] = LogEntry.objects.filter(object_id=str(obj.pk))
    assert entry.user.username == "ops"
    assert entry.action_flag == action_flag
    assert entry.content_type.model_class() is type(obj)
    return entry


class TestMerchants:
    def test_adding_a_merchant_gives_it_its_secrets_and_is_audited(self, staff):
        url = "/admin/merchants/merchant/add/"
        posted = {**change_form_data(staff, url), "name": "Dave", "is_verified": "on"}
        posted["withdraw_fee_rate"] = "0.0700"

        response = staff.post(url, posted, follow=True)

        assert response.status_code == 200
        merchant = Merchant.objects.get(name="Dave")
        assert merchant.is_verified
        assert merchant.withdraw_fee_rate == Decimal("0.0700")
        assert merchant.webhook_secret.startswith("whsec_")
        assert ApiSecret.objects.filter(merchant=merchant).count() == 1
        shown = [str(m) for m in get_messages(response.wsgi_request)]
        assert any(merchant.webhook_secret in text for text in shown)
        only_entry(merchant, ADDITION)

    def test_editing_a_merchant_is_audited(self, staff, alice):
        url = f"/admin/merchants/merchant/{alice.merchant.pk}/change/"
        posted = {**change_form_data(staff, url), "status": "disabled"}

        assert staff.post(url, posted).status_code == 302

        alice.merchant.refresh_from_db()
        assert alice.merchant.status == "disabled"
        assert "Status" in only_entry(alice.merchant).get_change_message()

    def test_rotating_the_api_secret_is_audited(self, staff, alice):
        staff.post(
            "/admin/merchants/merchant/",
            {"action": "rotate_api_secret", "_selected_action": [str(alice.merchant.pk)]},
        )

        assert ApiSecret.objects.filter(merchant=alice.merchant).count() == 2
        assert only_entry(alice.merchant).get_change_message() == "Rotated the API secret."

    def test_merchants_are_never_deleted(self, staff, alice):
        url = f"/admin/merchants/merchant/{alice.merchant.pk}/delete/"

        assert staff.post(url, {"post": "yes"}).status_code == 403
        assert Merchant.objects.filter(pk=alice.merchant.pk).exists()


class TestKeysAndSecrets:
    def test_creating_a_key_is_audited(self, staff, alice):
        staff.post(
            "/admin/merchants/apikey/add/",
            {"merchant": str(alice.merchant.pk), "name": "ops key", "scopes": ["LEDGER_READ"]},
        )

        key = ApiKey.objects.get(name="ops key")
        only_entry(key, ADDITION)

    def test_revoking_a_key_is_audited(self, staff, alice):
        key = ApiKey.objects.get(merchant=alice.merchant)

        staff.post(
            "/admin/merchants/apikey/", {"action": "revoke", "_selected_action": [str(key.pk)]}
        )

        key.refresh_from_db()
        assert key.revoked_at is not None
        assert only_entry(key).get_change_message() == "Revoked."

    def test_keys_are_revoked_not_deleted(self, staff, alice):
        key = ApiKey.objects.get(merchant=alice.merchant)

        response = staff.post(f"/admin/merchants/apikey/{key.pk}/delete/", {"post": "yes"})

        assert response.status_code == 403
        assert ApiKey.objects.filter(pk=key.pk).exists()

    def test_changing_a_secrets_expiry_is_audited(self, staff, alice):
        secret = ApiSecret.objects.get(merchant=alice.merchant)
        url = f"/admin/merchants/apisecret/{secret.pk}/change/"
        moment = timezone.now() + timezone.timedelta(hours=2)
        posted = {
            **change_form_data(staff, url),
            "expires_at_0": moment.strftime("%Y-%m-%d"),
            "expires_at_1": moment.strftime("%H:%M:%S"),
        }

        assert staff.post(url, posted).status_code == 302

        secret.refresh_from_db()
        assert secret.expires_at is not None
        assert "Expires at" in only_entry(secret).get_change_message()


class TestWebhookEvents:
    def test_a_resend_is_audited_and_events_are_never_deleted(self, staff, alice):
        event = webhook_event_emit(
            merchant=alice.merchant,
            type="trade.completed",
            subject_type="trade",
            subject_id="t-1",
            sequence=1,
            body_key="trade",
            body={"id": "t-1"},
        )
        WebhookEvent.objects.filter(pk=event.pk).update(status=WebhookEvent.Status.FAILED)

        staff.post(
            "/admin/merchants/webhookevent/",
            {
                "action": "resend",
                "_selected_action": [str(event.pk)],
                "staff_confirm": "yes",
                "reason": "their server is back",
            },
        )

        event.refresh_from_db()
        assert event.status == WebhookEvent.Status.PENDING
        assert only_entry(event).get_change_message() == (
            "Re-send the webhook: re-sending (same id and body). Reason: their server is back"
        )
        response = staff.post(f"/admin/merchants/webhookevent/{event.pk}/delete/", {"post": "yes"})
        assert response.status_code == 403


class TestTrades:
    @pytest.mark.usefixtures("_eager_celery")
    def test_a_force_cancel_is_audited(self, staff, desk, alice_funded, catalog_item):
        listing = make_listing(catalog_item, "10.00")
        trade = ok_data(
            desk.post(
                "/secure/buy",
                {
                    "tradeUrl": trade_url(42),
                    "items": [{"itemId": listing.id, "price": Decimal("10.50")}],
                },
                headers=alice_funded.headers,
            )
        )

        with desk.capture(execute=True):
            staff.post(
                "/admin/trading/trade/",
                {
                    "action": "cancel_trade",
                    "_selected_action": [trade["id"]],
                    "staff_confirm": "yes",
                    "reason": "stuck at the supplier",
                },
            )

        row = Trade.objects.get(pk=trade["id"])
        assert row.status == "canceled"
        assert only_entry(row).get_change_message() == (
            "Cancel the trade: 1 item(s) ended and refunded. Reason: stuck at the supplier"
        )


class TestSwitches:
    def test_pausing_deposits_of_a_game_is_audited(self, staff):
        settings, _ = GameSettings.objects.get_or_create(game=730)
        url = f"/admin/trading/gamesettings/{settings.pk}/change/"
        posted = {**change_form_data(staff, url), "deposits_paused": "on"}

        assert staff.post(url, posted).status_code == 302

        settings.refresh_from_db()
        assert settings.deposits_paused
        assert "Deposits paused" in only_entry(settings).get_change_message()

    def test_maintenance_mode_is_audited(
        self, staff, api, alice, django_capture_on_commit_callbacks
    ):
        settings, _ = ServiceSettings.objects.get_or_create(id=ServiceSettings.SINGLETON_ID)
        url = f"/admin/core/servicesettings/{settings.pk}/change/"
        posted = {**change_form_data(staff, url), "maintenance": "on"}

        # The console's pages read the switches (the sandbox clock's banner), so they are
        # cached: the saved switches replace them once the save commits.
        with django_capture_on_commit_callbacks(execute=True):
            assert staff.post(url, posted).status_code == 302

        assert "Maintenance" in only_entry(settings).get_change_message()
        response = api.get("/v1/ledger/transactions", headers=alice.headers)
        assert response.status_code == 503
        assert response.json()["error"]["code"] == 1007

    def test_editing_the_catalog_is_audited(self, staff, catalog_item):
        url = f"/admin/trading/catalogitem/{catalog_item.pk}/change/"
        posted = {**change_form_data(staff, url), "reference_price": "41.00"}

        response = staff.post(url, posted)
        assert response.status_code == 302, response.context["adminform"].form.errors

        catalog_item.refresh_from_db()
        assert catalog_item.reference_price == Decimal("41.00")
        assert "Reference price" in only_entry(catalog_item).get_change_message()
