"""The contract's own refusals (issue 25, items 5 and 10): each is VALIDATION_FAILED naming the
field, for both callers of an operation, and writes nothing.

- an ``externalId`` with a comma (decisions section 7: ``GET /secure/trades/{tradeId}`` reads a
  comma as a list of refs, so such a trade could never be found);
- a quick withdrawal's ``maxPrice`` at or below 0 (the catalog's row 1001 names it);
- a market item read with neither ``itemId`` nor ``marketHashName`` (a rule between parameters
  the document cannot express: the description states it);
- a ``tradeId`` path longer than the document's ``maxLength`` (it was looked up, answering [])."""

from decimal import Decimal

import pytest

from merchants.models import Merchant
from tests.factories import assert_error, make_actor, trade_url
from tests.trading.factories import CatalogItemFactory
from tests.withdrawals.conftest import client_headers
from trading.models import Trade

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    actor = make_actor(name="Alice")
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url="http://127.0.0.1:9/hooks")
    return actor


@pytest.fixture
def bob():
    return make_actor(name="Bob")


def refused(response, field: str) -> None:
    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert field in error["fields"], error


ITEM = {"itemId": "730-000001", "price": Decimal("10.00")}
COMMA_BODIES = {
    "/secure/buy": {"tradeUrl": trade_url(1), "items": [ITEM]},
    "/secure/sell": {"tradeUrl": trade_url(1), "items": [{**ITEM, "itemId": "730_1"}]},
    "/secure/buy/quick": {
        "tradeUrl": trade_url(1),
        "itemId": "730-000001",
        "maxPrice": 5,
        "amount": 1,
    },
    "/client/trading/withdraw": {"items": [ITEM]},
    "/client/trading/deposit": {"items": [{**ITEM, "itemId": "730_1"}]},
    "/client/trading/withdraw/quick": {"itemId": "730-000001", "maxPrice": 5, "amount": 1},
}


def headers_for(api, actor, path: str) -> dict[str, str]:
    return client_headers(api, actor, 1) if path.startswith("/client") else actor.headers


@pytest.mark.parametrize("path", list(COMMA_BODIES))
@pytest.mark.parametrize("external_id", ["a,b", ",", "order-1,"])
def test_an_external_id_with_a_comma_is_refused(api, alice, bob, path, external_id):
    headers = headers_for(api, alice, path)
    body = {**COMMA_BODIES[path], "externalId": external_id}

    refused(api.post(path, body, format="json", headers=headers), "externalId")
    assert Trade.objects.count() == 0


@pytest.mark.parametrize("path", ["/secure/buy/quick", "/client/trading/withdraw/quick"])
@pytest.mark.parametrize("max_price", [0, -1, Decimal("0.00"), Decimal("-0.01")])
def test_a_quick_withdrawal_max_price_at_or_below_zero_is_validation_failed(
    api, alice, path, max_price
):
    body = {**COMMA_BODIES[path], "maxPrice": max_price}
    response = api.post(path, body, format="json", headers=headers_for(api, alice, path))

    refused(response, "maxPrice")
    assert Trade.objects.count() == 0


def test_a_tiny_max_price_whose_ceiling_is_nothing_is_still_invalid_amount(api, alice):
    """The other half of the two rows: above 0, but nothing once the fee is backed out."""
    CatalogItemFactory(id="730-000001")
    body = {**COMMA_BODIES["/secure/buy/quick"], "maxPrice": Decimal("0.001")}
    response = api.post("/secure/buy/quick", body, format="json", headers=alice.headers)

    assert_error(response, 400, 1601, "INVALID_AMOUNT")


@pytest.mark.parametrize("path", ["/secure/market/item", "/client/market/item"])
@pytest.mark.parametrize("query", [{}, {"itemId": ""}, {"marketHashName": "", "delivery": "any"}])
def test_a_market_item_read_naming_no_item_is_refused(api, alice, path, query):
    refused(api.get(path, query, headers=headers_for(api, alice, path)), "itemId")


def test_the_market_item_rule_is_stated_in_the_description(api):
    document = api.get("/openapi.json").json()
    for path in ("/secure/market/item", "/client/market/item"):
        assert "with neither is refused with `VALIDATION_FAILED`" in (
            document["paths"][path]["get"]["description"].replace("\n", " ")
        )


@pytest.mark.parametrize(
    "trade_id",
    ["M" * 4001, "$\x1a," + "M" * 4001, ",".join(["x"] * 101)],
    ids=["4001 characters", "schemathesis's refs", "101 refs"],
)
def test_a_trade_ref_path_past_the_documents_bounds_is_refused(api, alice, trade_id):
    response = api.get(f"/secure/trades/{trade_id}", headers=alice.headers)

    refused(response, "tradeId")


def test_refs_within_the_bounds_are_still_looked_up(api, alice):
    response = api.get("/secure/trades/" + ",".join(["x"] * 100), headers=alice.headers)

    assert response.status_code == 200
    assert response.json()["data"] == []
