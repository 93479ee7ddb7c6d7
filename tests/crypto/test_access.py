"""Who may call the crypto routes, and each route's rate limit."""

import pytest
from django.urls import resolve

from merchants.models import Scope
from merchants.ratelimits import Limited, Rate, Rates
from tests.crypto.conftest import USER, cashout_body, user_headers
from tests.factories import add_api_key, assert_error

pytestmark = pytest.mark.django_db

SECURE = [
    ("get", "/secure/crypto/deposit-address", {"chain": "ETH", "platformId": USER}),
    ("get", "/secure/crypto/deposits", {"platformId": USER}),
    ("get", "/secure/crypto/withdrawals", {"platformId": USER}),
    ("post", "/secure/crypto/withdraw", cashout_body(platformId=USER)),
]
CLIENT = [
    ("get", "/client/crypto/deposit-address", {"chain": "ETH"}),
    ("get", "/client/crypto/deposits", {}),
    ("get", "/client/crypto/withdrawals", {}),
    ("post", "/client/crypto/withdraw", cashout_body()),
]
OPERATIONS = {
    "/secure/crypto/deposit-address": "secure.crypto.deposit_address",
    "/secure/crypto/deposits": "secure.crypto.deposits",
    "/secure/crypto/withdrawals": "secure.crypto.withdrawals",
    "/secure/crypto/withdraw": "secure.crypto.withdraw",
    "/client/crypto/deposit-address": "client.crypto.deposit_address",
    "/client/crypto/deposits": "client.crypto.deposits",
    "/client/crypto/withdrawals": "client.crypto.withdrawals",
    "/client/crypto/withdraw": "client.crypto.withdraw",
}


def call(desk, method: str, path: str, payload: dict, headers: dict):
    if method == "get":
        return desk.get(path, headers=headers, params=payload)
    return desk.post(path, payload, headers=headers)


@pytest.mark.parametrize(("method", "path", "payload"), SECURE)
def test_secure_routes_need_a_core_access_key(desk, alice, method, path, payload):
    assert_error(call(desk, method, path, payload, {}), 401, 1100, "UNAUTHORIZED")
    assert_error(
        call(desk, method, path, payload, {"api-key": "tsk_000000000000_unknown"}),
        401,
        1901,
        "INVALID_API_KEY",
    )
    ledger_only = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,))
    response = call(desk, method, path, payload, {"api-key": ledger_only})
    assert_error(response, 403, 1903, "API_KEY_SCOPE_DENIED")


@pytest.mark.parametrize(("method", "path", "payload"), CLIENT)
def test_client_routes_need_a_valid_client_token(desk, alice, method, path, payload):
    assert_error(call(desk, method, path, payload, {}), 401, 1108, "MISSING_BEARER")
    response = call(desk, method, path, payload, {"Authorization": "Bearer not.a.token"})
    assert_error(response, 401, 1102, "INVALID_TOKEN")


@pytest.mark.parametrize(("method", "path", "payload"), SECURE + CLIENT)
def test_each_route_spends_its_rate_limit(desk, alice, monkeypatch, method, path, payload):
    view = resolve(path).func.view_class
    operation = OPERATIONS[path]
    assert view.rate_limit.operation == operation
    tight = Limited(operation, Rates(Rate(1, 60), Rate(1, 60)), shared=f"tight.{operation}")
    monkeypatch.setattr(view, "rate_limit", tight)
    headers = alice.headers if path.startswith("/secure") else user_headers(desk, alice)

    first = call(desk, method, path, payload, headers)
    assert first.status_code == 200, first.content
    assert first["X-RateLimit-Limit"] == "1"
    response = call(desk, method, path, payload, headers)
    assert_error(response, 429, 1005, "RATE_LIMITED")
    assert response["Retry-After"]


def test_client_lists_validate_their_query(desk, alice):
    headers = user_headers(desk, alice)
    for path in ("/client/crypto/deposits", "/client/crypto/withdrawals"):
        response = desk.get(path, headers=headers, params={"limit": 101})
        assert "limit" in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]
