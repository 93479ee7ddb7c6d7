"""Rate-limit budgets of the game-world endpoints (contract section 8): each operation spends its
own per-merchant budget, by the merchant's verification tier."""

import time
import types

import pytest

from merchants import ratelimits
from tests.factories import make_actor, trade_url
from tests.trading.helpers import client_token

pytestmark = pytest.mark.django_db

# (method, path, kind, params, verified, unverified)
ENDPOINTS = [
    ("get", "/secure/prices", "secure", {}, 1_000, 100),
    ("get", "/secure/market", "secure", {}, 3_000, 100),
    ("get", "/secure/market/item", "secure", {"itemId": "730-000100"}, 6_000, 100),
    ("get", "/secure/inventory", "secure", {"tradeUrl": trade_url(1)}, 10_000, 100),
    ("post", "/secure/check-tradeurl", "secure", {"tradeurl": trade_url(1)}, 100_000, 100),
    ("get", "/client/market", "client", {}, 300, 30),
    ("get", "/client/market/item", "client", {"itemId": "730-000100"}, 600, 30),
    ("get", "/client/market/suggestions", "client", {"q": "ak"}, 600, 30),
    ("get", "/client/inventory", "client", {}, 1_000, 10),
]
IDS = [path for _, path, *_ in ENDPOINTS]


@pytest.fixture(autouse=True)
def frozen_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """One instant for the limiter, so no window ends between two calls of a test."""
    now = (int(time.time()) // 3600) * 3600 + 1800.0
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: now))


def call(api, actor, method, path, kind, params):
    if kind == "secure":
        headers = actor.headers
    else:
        headers = {"Authorization": f"Bearer {client_token(api, actor)}"}
    if method == "post":
        return api.post(path, params, format="json", headers=headers)
    return api.get(path, params, headers=headers)


@pytest.mark.parametrize(
    ("method", "path", "kind", "params", "verified", "unverified"), ENDPOINTS, ids=IDS
)
def test_budget_by_tier(api, world, method, path, kind, params, verified, unverified):
    for is_verified, limit in ((True, verified), (False, unverified)):
        actor = make_actor(is_verified=is_verified)
        first = call(api, actor, method, path, kind, params)
        assert first.status_code == 200, first.content
        assert first["X-RateLimit-Limit"] == str(limit)
        assert first["X-RateLimit-Remaining"] == str(limit - 1)
        second = call(api, actor, method, path, kind, params)
        assert second["X-RateLimit-Remaining"] == str(limit - 2)


def test_each_operation_spends_its_own_budget(api, alice, world):
    for _ in range(3):
        api.get("/secure/market", headers=alice.headers)
    prices = api.get("/secure/prices", headers=alice.headers)
    assert prices["X-RateLimit-Remaining"] == "999"
    item = api.get("/secure/market/item", {"itemId": "730-000100"}, headers=alice.headers)
    assert item["X-RateLimit-Remaining"] == "5999"
    market = api.get("/secure/market", headers=alice.headers)
    assert market["X-RateLimit-Remaining"] == "2996"


def test_client_and_secure_market_are_separate_budgets(api, alice, world):
    token = client_token(api, alice)
    for _ in range(2):
        api.get("/client/market", headers={"Authorization": f"Bearer {token}"})
    assert api.get("/secure/market", headers=alice.headers)["X-RateLimit-Remaining"] == "2999"


def test_clients_of_one_merchant_share_its_budget(api, alice, world):
    first = client_token(api, alice, 1)
    second = client_token(api, alice, 2)
    api.get("/client/market", headers={"Authorization": f"Bearer {first}"})
    response = api.get("/client/market", headers={"Authorization": f"Bearer {second}"})
    assert response["X-RateLimit-Remaining"] == "298"


def test_another_merchant_never_changes_what_the_first_sees(api, alice, bob, world):
    before = api.get("/secure/prices", headers=alice.headers)
    for _ in range(5):
        assert api.get("/secure/prices", headers=bob.headers).status_code == 200
    after = api.get("/secure/prices", headers=alice.headers)
    assert int(before["X-RateLimit-Remaining"]) - int(after["X-RateLimit-Remaining"]) == 1
    assert before.content.split(b'"data"')[1] == after.content.split(b'"data"')[1]
    assert api.get("/secure/prices", headers=bob.headers)["X-RateLimit-Remaining"] == "994"


def test_refusals_spend_the_budget_too(api, alice, world):
    bad = api.get("/secure/market", {"perPage": "0"}, headers=alice.headers)
    assert bad.status_code == 400
    assert bad["X-RateLimit-Remaining"] == "2999"
    assert api.get("/secure/market", headers=alice.headers)["X-RateLimit-Remaining"] == "2998"


def test_unverified_merchant_is_stopped_at_30_client_market_calls(api, world):
    actor = make_actor(is_verified=False)
    headers = {"Authorization": f"Bearer {client_token(api, actor)}"}
    for n in range(30):
        response = api.get("/client/market", headers=headers)
        assert response.status_code == 200, n
    refused = api.get("/client/market", headers=headers)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == 1005
    assert refused["X-RateLimit-Remaining"] == "0"
    assert int(refused["Retry-After"]) >= 1
    # Other operations of the same merchant are untouched.
    assert api.get("/client/market/suggestions", {"q": "ak"}, headers=headers).status_code == 200
