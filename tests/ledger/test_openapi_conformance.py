"""The ledger operations against their OpenAPI description with real rows in them (the
schemathesis run of tests/test_openapi.py sees an empty ledger), and what they declare."""

from decimal import Decimal

import pytest

from tests.ledger.conftest import fund
from tests.test_openapi import CONFORMANCE, schema, wsgi_in_test_transaction  # noqa: F401
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.usefixtures("wsgi_in_test_transaction")

LIST = "/v1/ledger/transactions"
ONE = "/v1/ledger/transactions/{transactionId}"


def _codes(operation: dict, status: str) -> set[int]:
    body = operation["responses"][status]["content"]["application/json"]["schema"]
    return set(body["properties"]["error"]["properties"]["code"]["enum"])


def test_both_operations_declare_their_errors(api):
    paths = api.get("/openapi.json").json()["paths"]
    listing, lookup = paths[LIST]["get"], paths[ONE]["get"]

    for operation in (listing, lookup):
        assert operation["security"] == [{"apiKey": []}]
        assert {1001, 1006} <= _codes(operation, "400")
        assert {1900, 1100, 1901} <= _codes(operation, "401")
        assert {1908, 1300, 1301, 1904} <= _codes(operation, "403")
        assert _codes(operation, "429") == {1005}
    assert _codes(lookup, "404") == {3001}
    names = {parameter["name"] for parameter in listing["parameters"]}
    assert names == {"type", "status", "startDate", "endDate", "limit", "offset"}


def test_rows_of_every_kind_conform(alice):
    fund(alice, type="WITHDRAWAL", status="INITIATED", token="USDT", chain="ETH", txn_hash="0x1")
    fund(alice, type="INTERNAL_TRANSFER", amount="-3.00")
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("5.00"), reason="t")
    case = schema[LIST]["GET"].Case(headers=alice.headers, query={"limit": 10})

    response = case.call_and_validate(checks=CONFORMANCE)

    assert len(response.json()["data"]["items"]) == 3


def test_a_transaction_and_its_refusals_conform(alice, bob):
    funding = fund(alice, type="DEPOSIT", status="COMPLETED")
    operation = schema[ONE]["GET"]

    found = operation.Case(
        headers=alice.headers, path_parameters={"transactionId": str(funding.id)}
    ).call_and_validate(checks=CONFORMANCE)
    missing = operation.Case(
        headers=bob.headers, path_parameters={"transactionId": str(funding.id)}
    ).call_and_validate(checks=CONFORMANCE)
    invalid = (
        schema[LIST]["GET"]
        .Case(headers=alice.headers, query={"limit": 0})
        .call_and_validate(checks=CONFORMANCE)
    )

    assert found.json()["data"]["timestamps"]["expired"] is None
    assert missing.json()["error"]["code"] == 3001
    assert invalid.json()["error"]["code"] == 1001
