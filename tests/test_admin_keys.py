"""Staff in the Django admin: API keys (created once, stored hashed, revoked at once), API secret
rotation and the maintenance switch."""

import re

import jwt
import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.messages import get_messages

from core.models import ServiceSettings
from merchants.models import ApiKey, ApiSecret, Scope
from merchants.selectors import api_key_hash, api_secret_for_signing
from tests.factories import assert_error, auth_body

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"
ADD_URL = "/admin/merchants/apikey/add/"
CHANGELIST_URL = "/admin/merchants/apikey/"
RAW_KEY = re.compile(r"\b(ts[ka]_[0-9a-f]{12}_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])")


def authenticate(api, raw_key: str, **extra):
    return api.post(AUTH, auth_body(), format="json", headers={"api-key": raw_key}, **extra)


def create_key_in_admin(admin_client, merchant, **form) -> tuple[str, object]:
    data = {"merchant": str(merchant.pk), "name": "from admin", "scopes": ["CORE_ACCESS"]}
    data.update(form)
    response = admin_client.post(ADD_URL, data, follow=True)
    assert response.status_code == 200
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    keys = [k for text in shown for k in RAW_KEY.findall(text)]
    assert len(keys) == 1, shown  # in exactly one message
    return keys[0], response


class TestCreateKey:
    def test_key_is_shown_once_works_and_is_stored_hashed(self, admin_client, api, alice):
        before = ApiKey.objects.count()
        raw_key, response = create_key_in_admin(admin_client, alice.merchant)
        assert raw_key in response.content.decode()  # rendered in the page that follows
        assert ApiKey.objects.count() == before + 1

        row = ApiKey.objects.get(prefix=raw_key[:16])
        assert row.merchant == alice.merchant
        assert row.name == "from admin"
        assert row.scopes == ["CORE_ACCESS"]
        assert row.is_admin is False
        assert row.ip_whitelist == []
        assert row.key_hash == api_key_hash(raw_key)
        assert row.key_hash != raw_key
        assert raw_key not in str([getattr(row, f.attname) for f in ApiKey._meta.fields])

        assert authenticate(api, raw_key).status_code == 200

        # Shown once: neither the list nor the key's own page shows it again.
        assert raw_key not in admin_client.get(CHANGELIST_URL).content.decode()
        page = admin_client.get(f"/admin/merchants/apikey/{row.pk}/change/").content.decode()
        assert raw_key not in page
        assert row.prefix in page  # the prefix is visible

    def test_prefix_is_visible_in_the_list(self, admin_client, alice):
        raw_key, _ = create_key_in_admin(admin_client, alice.merchant)
        assert raw_key[:16] in admin_client.get(CHANGELIST_URL).content.decode()

    def test_scopes_and_ip_whitelist(self, admin_client, api, alice):
        raw_key, _ = create_key_in_admin(
            admin_client,
            alice.merchant,
            scopes=["CORE_ACCESS", "LEDGER_READ"],
            ip_whitelist="10.0.0.0/8\n192.0.2.7",
        )
        row = ApiKey.objects.get(prefix=raw_key[:16])
        assert sorted(row.scopes) == ["CORE_ACCESS", "LEDGER_READ"]
        assert row.ip_whitelist == ["10.0.0.0/8", "192.0.2.7/32"]
        assert_error(authenticate(api, raw_key), 403, 1904, "API_KEY_IP_DENIED")
        assert authenticate(api, raw_key, REMOTE_ADDR="10.3.2.1").status_code == 200

    def test_ledger_only_key_from_the_admin_is_refused_on_core_routes(
        self, admin_client, api, alice
    ):
        raw_key, _ = create_key_in_admin(admin_client, alice.merchant, scopes=["LEDGER_READ"])
        assert_error(authenticate(api, raw_key), 403, 1903, "API_KEY_SCOPE_DENIED")

    def test_admin_key(self, admin_client, api, alice):
        raw_key, _ = create_key_in_admin(admin_client, alice.merchant, is_admin="on")
        assert raw_key.startswith("tsa_")
        assert ApiKey.objects.get(prefix=raw_key[:16]).is_admin is True
        assert authenticate(api, raw_key).status_code == 200

    def test_key_acts_for_the_chosen_merchant_only(self, admin_client, api, alice, bob):
        raw_key, _ = create_key_in_admin(admin_client, bob.merchant)
        token = authenticate(api, raw_key).json()["data"]["token"]
        assert jwt.get_unverified_header(token)["userId"] == str(bob.merchant.pk)

    def test_invalid_cidr_creates_nothing(self, admin_client, alice):
        before = ApiKey.objects.count()
        response = admin_client.post(
            ADD_URL,
            {"merchant": str(alice.merchant.pk), "scopes": ["CORE_ACCESS"], "ip_whitelist": "x/99"},
        )
        assert response.status_code == 200  # the form again, with its error
        assert "x/99" in response.content.decode()
        assert ApiKey.objects.count() == before

    def test_no_scope_creates_nothing(self, admin_client, alice):
        before = ApiKey.objects.count()
        response = admin_client.post(ADD_URL, {"merchant": str(alice.merchant.pk)})
        assert response.status_code == 200
        assert ApiKey.objects.count() == before

    def test_staff_without_login_cannot_create(self, client, alice):
        before = ApiKey.objects.count()
        response = client.post(ADD_URL, {"merchant": str(alice.merchant.pk), "scopes": ["x"]})
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]
        assert ApiKey.objects.count() == before


class TestRevokeKey:
    def test_revoke_action_refuses_the_key_at_once(self, admin_client, api, alice):
        raw_key, _ = create_key_in_admin(admin_client, alice.merchant)
        assert authenticate(api, raw_key).status_code == 200
        row = ApiKey.objects.get(prefix=raw_key[:16])
        response = admin_client.post(
            CHANGELIST_URL, {"action": "revoke", "_selected_action": [str(row.pk)]}, follow=True
        )
        assert response.status_code == 200
        assert any("Revoked 1 key" in str(m) for m in response.context["messages"])
        row.refresh_from_db()
        assert row.revoked_at is not None
        assert_error(authenticate(api, raw_key), 401, 1901, "INVALID_API_KEY")
        # Audited.
        entries = LogEntry.objects.filter(object_id=str(row.pk), action_flag=CHANGE)
        assert [e.get_change_message() for e in entries] == ["Revoked."]

    def test_revoke_selected_keys_only(self, admin_client, api, alice, bob):
        alice_row = ApiKey.objects.get(prefix=alice.api_key[:16])
        admin_client.post(
            CHANGELIST_URL, {"action": "revoke", "_selected_action": [str(alice_row.pk)]}
        )
        assert_error(authenticate(api, alice.api_key), 401, 1901, "INVALID_API_KEY")
        assert authenticate(api, bob.api_key).status_code == 200

    def test_revoking_twice_keeps_the_first_time(self, admin_client, alice, clock_advance):
        row = ApiKey.objects.get(prefix=alice.api_key[:16])
        payload = {"action": "revoke", "_selected_action": [str(row.pk)]}
        admin_client.post(CHANGELIST_URL, payload)
        row.refresh_from_db()
        first = row.revoked_at
        clock_advance(3600)
        admin_client.post(CHANGELIST_URL, payload)
        row.refresh_from_db()
        assert row.revoked_at == first

    def test_change_page_cannot_edit_the_key_material(self, admin_client, alice):
        row = ApiKey.objects.get(prefix=alice.api_key[:16])
        admin_client.post(
            f"/admin/merchants/apikey/{row.pk}/change/",
            {"name": "renamed", "scopes": '["LEDGER_READ"]', "prefix": "tsk_000000000000"},
        )
        row.refresh_from_db()
        assert row.name == "renamed"
        assert row.scopes == [Scope.CORE_ACCESS, Scope.LEDGER_READ]
        assert row.prefix == alice.api_key[:16]


class TestRotateSecret:
    def test_rotate_action(self, admin_client, api, alice):
        old_token = authenticate(api, alice.api_key).json()["data"]["token"]
        old = api_secret_for_signing(merchant=alice.merchant)
        response = admin_client.post(
            "/admin/merchants/merchant/",
            {"action": "rotate_api_secret", "_selected_action": [str(alice.merchant.pk)]},
            follow=True,
        )
        assert response.status_code == 200
        new = api_secret_for_signing(merchant=alice.merchant)
        assert new.pk != old.pk
        old.refresh_from_db()
        assert old.expires_at is not None
        new_token = authenticate(api, alice.api_key).json()["data"]["token"]
        jwt.decode(new_token, new.secret, algorithms=["HS256"])
        jwt.decode(old_token, old.secret, algorithms=["HS256"])
        assert ApiSecret.objects.filter(merchant=alice.merchant).count() == 2
        assert LogEntry.objects.filter(object_id=str(alice.merchant.pk)).exists()

    def test_secrets_are_never_shown(self, admin_client, alice):
        secret = api_secret_for_signing(merchant=alice.merchant)
        page = admin_client.get(f"/admin/merchants/apisecret/{secret.pk}/change/")
        assert page.status_code == 200
        assert secret.secret not in page.content.decode()
        merchant_page = admin_client.get(f"/admin/merchants/merchant/{alice.merchant.pk}/change/")
        assert merchant_page.status_code == 200
        assert alice.merchant.webhook_secret not in merchant_page.content.decode()


class TestMaintenanceSwitch:
    def switch(self, admin_client, on: bool, capture) -> None:
        ServiceSettings.objects.get_or_create(id=ServiceSettings.SINGLETON_ID)
        data = {"maintenance": "on"} if on else {}
        with capture(execute=True):
            response = admin_client.post(
                f"/admin/core/servicesettings/{ServiceSettings.SINGLETON_ID}/change/", data
            )
        assert response.status_code == 302, response.content
        assert ServiceSettings.objects.get().maintenance is on

    def test_maintenance_on_and_off(
        self, admin_client, api, alice, django_capture_on_commit_callbacks
    ):
        assert authenticate(api, alice.api_key).status_code == 200  # settings now cached

        self.switch(admin_client, True, django_capture_on_commit_callbacks)
        response = authenticate(api, alice.api_key)
        assert_error(response, 503, 1007, "SYSTEM_MAINTENANCE")
        assert response["Retry-After"] == "60"
        health = api.get("/health")
        assert health.status_code == 200
        assert health.json()["data"]["status"] == "ok"
        # Staff can still reach the admin to switch it off.
        assert admin_client.get("/admin/core/servicesettings/").status_code == 200

        self.switch(admin_client, False, django_capture_on_commit_callbacks)
        assert authenticate(api, alice.api_key).status_code == 200

    def test_maintenance_comes_before_authentication(
        self, admin_client, api, alice, django_capture_on_commit_callbacks
    ):
        self.switch(admin_client, True, django_capture_on_commit_callbacks)
        response = api.post(AUTH, {}, format="json")
        assert_error(response, 503, 1007, "SYSTEM_MAINTENANCE")
