"""The api-key header: every authentication error code, each provoked, and the order of checks."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory

from core import clock
from merchants.models import ApiKey, Merchant, Scope
from merchants.selectors import api_key_hash
from merchants.services import (
    api_key_create,
    api_key_revoke,
    api_secrets_revoke,
    callers_changed,
)
from merchants.views import MerchantApiView
from tests.factories import add_api_key, assert_error, auth_body, make_actor

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"


def post(api, headers=None, **extra):
    return api.post(AUTH, auth_body(), format="json", headers=headers or {}, **extra)


def key_row(raw_key: str) -> ApiKey:
    return ApiKey.objects.get(prefix=raw_key[: ApiKey.PREFIX_LENGTH])


class TestMissingCredentials:
    def test_nothing_at_all_is_1100_unauthorized(self, api, alice):
        assert_error(post(api), 401, 1100, "UNAUTHORIZED")

    def test_empty_api_key_header_is_1100(self, api, alice):
        assert_error(post(api, {"api-key": ""}), 401, 1100, "UNAUTHORIZED")

    def test_bearer_without_api_key_is_1900_missing_api_key(self, api, alice):
        response = post(api, {"Authorization": "Bearer whatever"})
        assert_error(response, 401, 1900, "MISSING_API_KEY")

    def test_any_authorization_header_without_api_key_is_1900(self, api, alice):
        response = post(api, {"Authorization": "Basic dXNlcjpwYXNz"})
        assert_error(response, 401, 1900, "MISSING_API_KEY")

    def test_a_client_token_is_no_substitute_for_the_key(self, api, alice):
        token = post(api, alice.headers).json()["data"]["token"]
        response = post(api, {"Authorization": f"Bearer {token}"})
        assert_error(response, 401, 1900, "MISSING_API_KEY")


class TestInvalidKey:
    def test_unknown_key_is_1901(self, api, alice):
        response = post(api, {"api-key": "tsk_0123456789ab_" + "x" * 43})
        assert_error(response, 401, 1901, "INVALID_API_KEY")

    @pytest.mark.parametrize("raw", ["x", "tsk_", "not a key at all", "ü" * 60])
    def test_garbage_key_is_1901(self, api, alice, raw):
        assert_error(post(api, {"api-key": raw}), 401, 1901, "INVALID_API_KEY")

    def test_right_prefix_wrong_secret_part_is_1901(self, api, alice):
        prefix = alice.api_key[: ApiKey.PREFIX_LENGTH]
        forged = prefix + "_" + "A" * 43
        assert forged != alice.api_key
        assert_error(post(api, {"api-key": forged}), 401, 1901, "INVALID_API_KEY")

    def test_key_with_extra_characters_is_1901(self, api, alice):
        response = post(api, {"api-key": alice.api_key + "x"})
        assert_error(response, 401, 1901, "INVALID_API_KEY")

    def test_truncated_key_is_1901(self, api, alice):
        response = post(api, {"api-key": alice.api_key[:-1]})
        assert_error(response, 401, 1901, "INVALID_API_KEY")

    def test_revoked_key_is_1901_at_once(self, api, alice):
        assert post(api, alice.headers).status_code == 200
        api_key_revoke(api_key=key_row(alice.api_key))
        assert_error(post(api, alice.headers), 401, 1901, "INVALID_API_KEY")

    def test_revoking_one_key_leaves_the_others(self, api, alice):
        second = add_api_key(alice.merchant)
        api_key_revoke(api_key=key_row(alice.api_key))
        assert post(api, {"api-key": second}).status_code == 200

    def test_bobs_key_does_not_open_alices_account(self, api, alice, bob):
        # The key decides the merchant: a token issued with bob's key names bob.
        import jwt

        token = post(api, bob.headers).json()["data"]["token"]
        assert jwt.get_unverified_header(token)["userId"] == str(bob.merchant.pk)


class TestAccountDisabled:
    def test_disabled_merchant_is_1301(self, api, alice):
        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
        assert_error(post(api, alice.headers), 403, 1301, "ACCOUNT_DISABLED")

    def test_disabling_one_merchant_leaves_the_other(self, api, alice, bob):
        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
        assert post(api, bob.headers).status_code == 200

    def test_re_enabled_merchant_works_again(self, api, alice):
        status_set(alice.merchant, Merchant.Status.DISABLED)
        assert_error(post(api, alice.headers), 403, 1301, "ACCOUNT_DISABLED")
        status_set(alice.merchant, Merchant.Status.ACTIVE)
        assert post(api, alice.headers).status_code == 200


def status_set(merchant: Merchant, status: str) -> None:
    """As staff do in the admin: the row changes, and every process drops the callers it keeps
    (the admin's save calls ``callers_changed``)."""
    Merchant.objects.filter(pk=merchant.pk).update(status=status)
    callers_changed()


class TestScope:
    def test_key_without_core_access_is_1903(self, api, db):
        ledger_only = make_actor(name="Ledger only", scopes=(Scope.LEDGER_READ,))
        assert_error(post(api, ledger_only.headers), 403, 1903, "API_KEY_SCOPE_DENIED")

    def test_key_with_no_scopes_is_1903(self, api, db):
        nothing = make_actor(name="No scopes", scopes=())
        assert_error(post(api, nothing.headers), 403, 1903, "API_KEY_SCOPE_DENIED")

    def test_core_access_alone_is_enough(self, api, db):
        core = make_actor(name="Core", scopes=(Scope.CORE_ACCESS,))
        assert post(api, core.headers).status_code == 200

    def test_admin_key_with_core_access_acts_for_its_merchant(self, api, alice):
        admin_key = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,), is_admin=True)
        assert admin_key.startswith("tsa_")
        assert post(api, {"api-key": admin_key}).status_code == 200


class TestIpWhitelist:
    def test_address_outside_the_whitelist_is_1904(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        # APIClient calls from 127.0.0.1.
        assert_error(post(api, {"api-key": key}), 403, 1904, "API_KEY_IP_DENIED")

    def test_address_inside_an_allowed_cidr_works(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8", "192.0.2.7/32"))
        assert post(api, {"api-key": key}, REMOTE_ADDR="10.200.3.4").status_code == 200
        assert post(api, {"api-key": key}, REMOTE_ADDR="192.0.2.7").status_code == 200
        response = post(api, {"api-key": key}, REMOTE_ADDR="192.0.2.8")
        assert_error(response, 403, 1904, "API_KEY_IP_DENIED")

    def test_single_address_entry_is_a_host_network(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("127.0.0.1",))
        assert key_row(key).ip_whitelist == ["127.0.0.1/32"]
        assert post(api, {"api-key": key}).status_code == 200

    def test_ipv6(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("2001:db8::/32",))
        assert post(api, {"api-key": key}, REMOTE_ADDR="2001:db8::1").status_code == 200
        response = post(api, {"api-key": key}, REMOTE_ADDR="2001:db9::1")
        assert_error(response, 403, 1904, "API_KEY_IP_DENIED")
        response = post(api, {"api-key": key})  # IPv4 127.0.0.1
        assert_error(response, 403, 1904, "API_KEY_IP_DENIED")

    def test_key_without_whitelist_allows_any_address(self, api, alice):
        for address in ("127.0.0.1", "203.0.113.9", "2001:db8::5"):
            assert post(api, alice.headers, REMOTE_ADDR=address).status_code == 200

    def test_forwarded_for_is_ignored_without_proxies(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        response = post(api, {"api-key": key, "X-Forwarded-For": "10.1.2.3"})
        assert_error(response, 403, 1904, "API_KEY_IP_DENIED")

    def test_one_trusted_proxy_takes_the_last_hop(self, api, alice, settings):
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        # The proxy appended the real client address; the left part is whatever the client sent.
        good = post(api, {"api-key": key, "X-Forwarded-For": "198.51.100.1, 10.1.2.3"})
        assert good.status_code == 200
        spoofed = post(api, {"api-key": key, "X-Forwarded-For": "10.1.2.3, 198.51.100.1"})
        assert_error(spoofed, 403, 1904, "API_KEY_IP_DENIED")

    def test_two_trusted_proxies(self, api, alice, settings):
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 2}
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        headers = {"api-key": key, "X-Forwarded-For": "10.9.9.9, 10.1.2.3, 172.16.0.1"}
        assert post(api, headers).status_code == 200
        headers = {"api-key": key, "X-Forwarded-For": "10.9.9.9, 198.51.100.1, 10.1.2.3"}
        assert_error(post(api, headers), 403, 1904, "API_KEY_IP_DENIED")

    def test_proxy_without_forwarded_for_uses_the_peer(self, api, alice, settings):
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        assert post(api, {"api-key": key}, REMOTE_ADDR="10.0.0.2").status_code == 200
        assert_error(post(api, {"api-key": key}), 403, 1904, "API_KEY_IP_DENIED")

    def test_unparseable_forwarded_address_is_denied(self, api, alice, settings):
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        response = post(api, {"api-key": key, "X-Forwarded-For": "not-an-ip"})
        assert_error(response, 403, 1904, "API_KEY_IP_DENIED")

    def test_bad_cidr_is_refused_when_creating_the_key(self, alice):
        with pytest.raises(ValueError, match="does not appear to be"):
            api_key_create(merchant=alice.merchant, scopes=[Scope.CORE_ACCESS], ip_whitelist=["x"])
        assert ApiKey.objects.filter(merchant=alice.merchant).count() == 1


class TestOrderOfChecks:
    """Key known and live (1901), merchant active (1301), IP (1904), then the scope (1903)."""

    def test_revoked_key_of_a_disabled_merchant_is_1901(self, api, alice):
        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
        api_key_revoke(api_key=key_row(alice.api_key))
        assert_error(post(api, alice.headers), 401, 1901, "INVALID_API_KEY")

    def test_disabled_merchant_before_ip(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
        assert_error(post(api, {"api-key": key}), 403, 1301, "ACCOUNT_DISABLED")

    def test_ip_before_scope(self, api, alice):
        key = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,), ip_whitelist=("10.0.0.0/8",))
        assert_error(post(api, {"api-key": key}), 403, 1904, "API_KEY_IP_DENIED")
        response = post(api, {"api-key": key}, REMOTE_ADDR="10.0.0.1")
        assert_error(response, 403, 1903, "API_KEY_SCOPE_DENIED")

    def test_authentication_before_body_validation(self, api, alice):
        response = api.post(AUTH, {"junk": 1}, format="json", headers={"api-key": "nope"})
        assert_error(response, 401, 1901, "INVALID_API_KEY")
        response = api.post(AUTH, {"junk": 1}, format="json")
        assert_error(response, 401, 1100, "UNAUTHORIZED")

    def test_scope_before_body_validation(self, api, db):
        ledger_only = make_actor(name="Ledger only", scopes=(Scope.LEDGER_READ,))
        response = api.post(AUTH, {"junk": 1}, format="json", headers=ledger_only.headers)
        assert_error(response, 403, 1903, "API_KEY_SCOPE_DENIED")


class _LedgerLikeApi(MerchantApiView):
    required_scope = Scope.LEDGER_READ

    def get(self, request):
        return Response({"merchantId": str(self.caller(request).merchant.pk)})


class _CoreApi(MerchantApiView):
    def get(self, request):
        return Response({"merchantId": str(self.caller(request).merchant.pk)})


def call(view_class, raw_key: str | None, **extra):
    headers = {"HTTP_API_KEY": raw_key} if raw_key is not None else {}
    request = APIRequestFactory().get("/v1/ledger/transactions", **headers, **extra)
    response = view_class.as_view()(request)
    response.render()
    return response


class TestLedgerScopePermission:
    """1908 and 1300 belong to the ledger route; checked on a throwaway LEDGER_READ view."""

    def test_key_with_ledger_read_passes(self, alice):
        response = call(_LedgerLikeApi, alice.api_key)
        assert response.status_code == 200
        assert response.data == {"merchantId": str(alice.merchant.pk)}

    def test_key_without_ledger_read_is_1908(self, alice):
        key = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,))
        response = call(_LedgerLikeApi, key)
        assert response.status_code == 403
        assert response.data["code"] == 1908
        assert response.data["key"] == "INSUFFICIENT_SCOPE"

    def test_admin_key_is_1300_even_with_ledger_read(self, alice):
        key = add_api_key(
            alice.merchant, scopes=(Scope.CORE_ACCESS, Scope.LEDGER_READ), is_admin=True
        )
        response = call(_LedgerLikeApi, key)
        assert response.status_code == 403
        assert response.data["code"] == 1300
        assert response.data["key"] == "MERCHANT_API_KEY_REQUIRED"

    def test_admin_key_check_comes_before_the_scope(self, alice):
        key = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,), is_admin=True)
        response = call(_LedgerLikeApi, key)
        assert response.data["key"] == "MERCHANT_API_KEY_REQUIRED"

    def test_authentication_errors_come_first(self, alice):
        assert call(_LedgerLikeApi, None).data["key"] == "UNAUTHORIZED"
        assert call(_LedgerLikeApi, "tsk_bad").data["key"] == "INVALID_API_KEY"
        ip_bound = add_api_key(alice.merchant, scopes=(), ip_whitelist=("10.0.0.0/8",))
        assert call(_LedgerLikeApi, ip_bound).data["key"] == "API_KEY_IP_DENIED"

    def test_bearer_alone_on_the_ledger_is_1900(self, alice):
        request = APIRequestFactory().get("/v1/ledger/transactions", HTTP_AUTHORIZATION="Bearer x")
        response = _LedgerLikeApi.as_view()(request)
        assert response.status_code == 401
        assert response.data["key"] == "MISSING_API_KEY"

    def test_default_scope_of_a_merchant_view_is_core_access(self, alice):
        ledger_only = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,))
        assert call(_CoreApi, ledger_only).data["key"] == "API_KEY_SCOPE_DENIED"
        core_only = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,))
        assert call(_CoreApi, core_only).status_code == 200


class TestNoApiSecret:
    def test_all_secrets_revoked_is_1915(self, api, alice):
        assert api_secrets_revoke(merchant=alice.merchant) == 1
        assert_error(post(api, alice.headers), 400, 1915, "NO_API_SECRET_CONFIGURED")

    def test_bob_still_issues_when_alice_has_no_secret(self, api, alice, bob):
        api_secrets_revoke(merchant=alice.merchant)
        assert post(api, bob.headers).status_code == 200

    def test_1915_writes_no_client(self, api, alice):
        from merchants.models import Client

        api_secrets_revoke(merchant=alice.merchant)
        post(api, alice.headers)
        assert not Client.objects.filter(merchant=alice.merchant).exists()


class TestLastUsed:
    def test_last_used_is_set_on_success(self, api, alice):
        assert key_row(alice.api_key).last_used_at is None
        before = clock.now()
        assert post(api, alice.headers).status_code == 200
        used = key_row(alice.api_key).last_used_at
        assert used is not None
        assert before - timedelta(seconds=1) <= used <= clock.now()

    def test_last_used_is_untouched_when_refused(self, api, alice):
        key = add_api_key(alice.merchant, ip_whitelist=("10.0.0.0/8",))
        post(api, {"api-key": key})
        assert key_row(key).last_used_at is None

    def test_last_used_moves_at_most_once_a_minute(self, api, alice, clock_advance):
        post(api, alice.headers)
        first = key_row(alice.api_key).last_used_at
        clock_advance(30)
        post(api, alice.headers)
        assert key_row(alice.api_key).last_used_at == first
        clock_advance(31)
        post(api, alice.headers)
        later = key_row(alice.api_key).last_used_at
        assert later > first + timedelta(seconds=60)

    def test_last_used_follows_the_service_clock(self, api, alice, clock_advance):
        clock_advance(3 * 3600)
        post(api, alice.headers)
        used = key_row(alice.api_key).last_used_at
        assert used > timezone.now() + timedelta(hours=2, minutes=59)


def test_only_the_hash_of_a_key_is_stored(alice):
    row = key_row(alice.api_key)
    assert row.key_hash == api_key_hash(alice.api_key)
    assert alice.api_key not in (row.key_hash, row.prefix)
    assert row.prefix == alice.api_key[:16]
    assert alice.api_key.startswith("tsk_")
    prefix, separator, secret = alice.api_key[:16], alice.api_key[16], alice.api_key[17:]
    assert separator == "_"
    assert all(c in "0123456789abcdef" for c in prefix[4:])
    assert len(secret) == 43
