"""Every read of the API over SQLite: each GET operation of /openapi.json with realistic
queries (every value of each enumerated parameter, searches, ranges, second pages), then the
pages themselves: trade cursors, ledger offsets, crypto ``before`` pages, market and inventory
pages, followed to their end."""

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from typing import Any

import pytest
from rest_framework.test import APIClient

from core.market_version import market_version_bump
from sandbox.models import SandboxListing
from tests.factories import trade_url
from tests.quickstart.conftest import OWNER, Http, World, ok
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db

Query = dict[str, Any]
# (path parameters, query) of one request
Request = tuple[dict[str, str], Query]
MARKET_SORTS = ("relevance", "priceAsc", "priceDesc", "nameAsc", "nameDesc")


@dataclass(frozen=True)
class Read:
    """How to call one GET operation: as whom, and its requests over the world. The document's
    enumerated query parameters are tried with each of their values on the first request."""

    who: str  # merchant, client or anyone
    requests: Callable[[World], list[Request]] = field(default=lambda w: [({}, {})])


def queries(*variants: Query) -> Callable[[World], list[Request]]:
    return lambda w: [({}, query) for query in variants]


MARKET = queries(
    {},
    {"search": "a", "minPrice": 0.5, "maxPrice": 5000},
    {"search": "Redline", "sort": "priceAsc"},
    {"perPage": 5, "page": 2},
)


def _market_item(w: World) -> list[Request]:
    item = w.listed_item
    return [
        ({}, {"itemId": item["reference"]}),
        ({}, {"marketHashName": item["marketHashName"], "perPage": 1, "page": 2}),
        ({}, {"itemId": item["reference"], "floatMin": 0.01, "floatMax": 0.99}),
    ]


def _inventory(base: Query) -> Callable[[World], list[Request]]:
    variants: list[Query] = [
        {},
        *({"sort": sort} for sort in (*MARKET_SORTS, "unknown-sorts-are-ignored")),
        {"search": "a", "minPrice": 0.01, "maxPrice": 10000},
        {"limit": 1, "page": 2},
        {"limit": -1},
    ]
    return lambda w: [({}, base | variant) for variant in variants]


def _crypto_pages(w: World) -> list[Request]:
    return [
        ({}, {"platformId": w.user_id}),
        ({}, {"platformId": w.user_id, "limit": 1}),
        ({}, {"platformId": w.user_id, "before": "2100-01-01T00:00:00Z"}),
    ]


def _client_crypto_pages(w: World) -> list[Request]:
    return [({}, {}), ({}, {"limit": 1}), ({}, {"before": "2100-01-01T00:00:00Z"})]


READS: dict[str, Read] = {
    "/health": Read("anyone"),
    "/secure/prices": Read("merchant", queries({}, {"game": 252490})),
    "/secure/market": Read("merchant", MARKET),
    "/client/market": Read("client", MARKET),
    "/secure/market/item": Read("merchant", _market_item),
    "/client/market/item": Read("client", _market_item),
    "/client/market/suggestions": Read("client", queries({"q": "a"}, {"q": "redl"})),
    "/secure/inventory": Read("merchant", _inventory({"tradeUrl": trade_url(OWNER)})),
    "/client/inventory": Read("client", _inventory({})),
    "/secure/trades": Read("merchant", queries({}, {"limit": 1}, {"game": 252490})),
    "/client/trades": Read("client", queries({}, {"limit": 1})),
    "/secure/trades/{tradeId}": Read(
        "merchant",
        lambda w: [
            ({"tradeId": w.buys[0]["id"]}, {}),
            ({"tradeId": "buy-2"}, {}),
            ({"tradeId": f"{w.buys[0]['id']},buy-3,buy-4"}, {}),
        ],
    ),
    "/client/trades/{id}": Read(
        "client", lambda w: [({"id": trade["id"]}, {}) for trade in w.client_trades]
    ),
    "/secure/crypto/deposit-address": Read(
        "merchant", lambda w: [({}, {"chain": "ETH", "platformId": w.user_id})]
    ),
    "/client/crypto/deposit-address": Read("client", queries({"chain": "BSC"})),
    "/secure/crypto/deposits": Read("merchant", _crypto_pages),
    "/client/crypto/deposits": Read("client", _client_crypto_pages),
    "/secure/crypto/withdrawals": Read("merchant", _crypto_pages),
    "/client/crypto/withdrawals": Read("client", _client_crypto_pages),
    "/secure/webhooks/events": Read("merchant", queries({}, {"limit": 1})),
    "/v1/ledger/transactions": Read(
        "merchant",
        queries(
            {},
            {"type": "ADMIN_CREDIT"},
            {"limit": 2, "offset": 2},
            {"startDate": "2000-01-01", "endDate": "2100-12-31T23:59:59Z"},
        ),
    ),
    "/v1/ledger/transactions/{transactionId}": Read(
        "merchant", lambda w: [({"transactionId": w.funding_id}, {})]
    ),
    "/v1/wallets/me/balance": Read("merchant"),
    "/client/verification/status": Read("client"),
    "/sandbox/clock": Read("merchant"),
    "/sandbox/demo-callback": Read("merchant"),
}


@cache
def _document() -> dict[str, Any]:
    response = APIClient().get("/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def _get_operations() -> dict[str, dict[str, Any]]:
    return {path: ops["get"] for path, ops in _document()["paths"].items() if "get" in ops}


def _enumerated(operation: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name, value) of every value of every enumerated query parameter."""
    return [
        (parameter["name"], value)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
        for value in parameter.get("schema", {}).get("enum", [])
    ]


def headers_of(world: World, who: str) -> dict[str, str]:
    return {"merchant": world.shop.headers, "client": world.client, "anyone": {}}[who]


def test_every_get_operation_of_the_document_is_read_here():
    assert set(_get_operations()) == set(READS)


@pytest.mark.parametrize("path", sorted(READS))
def test_the_read_answers_every_realistic_query(http: Http, world: World, path: str):
    read = READS[path]
    requests = read.requests(world)
    path_parameters, base = requests[0]
    variants = [base | {name: value} for name, value in _enumerated(_get_operations()[path])]
    calls = [*requests, *((path_parameters, query) for query in variants)]
    failures = []
    for parameters, query in calls:
        url = path.format(**parameters)
        response = http.get(url, query, headers=headers_of(world, read.who))
        if response.status_code != 200 or not response.json().get("success"):
            failures.append(f"GET {url} {query}: {response.status_code} {response.content[:300]!r}")

    assert failures == []


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["id"] for row in rows]


@pytest.mark.parametrize("who", ["merchant", "client"])
def test_trade_history_cursors_walk_every_trade_once_newest_first(
    http: Http, world: World, who: str
):
    route = "/secure/trades" if who == "merchant" else "/client/trades"
    headers = headers_of(world, who)
    everything = ok(http.get(route, {"limit": 100}, headers=headers))
    walked, cursor, pages = [], None, 0
    while True:
        page = ok(
            http.get(route, {"limit": 1, **({"cursor": cursor} if cursor else {})}, headers=headers)
        )
        walked += _ids(page["items"])
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            break

    assert everything["nextCursor"] is None
    assert pages == len(everything["items"]) >= 4
    assert walked == _ids(everything["items"])
    created = [row["createdAt"] for row in everything["items"]]
    assert created == sorted(created, reverse=True)


def test_the_other_merchants_trade_of_the_same_external_id_is_not_listed(http, world):
    trades = ok(http.get("/secure/trades", {"limit": 100}, headers=world.shop.headers))["items"]

    assert {trade["merchantId"] for trade in trades} == {str(world.shop.merchant.pk)}
    assert [t["externalId"] for t in trades if t.get("externalId") == "buy-1"] == ["buy-1"]


def test_ledger_pages_by_offset_add_up_to_the_whole_ledger(http: Http, world: World):
    headers = world.shop.headers
    everything = ok(http.get("/v1/ledger/transactions", {"limit": 100}, headers=headers))
    pages = [
        ok(http.get("/v1/ledger/transactions", {"limit": 2, "offset": offset}, headers=headers))
        for offset in range(0, everything["pagination"]["total"] + 2, 2)
    ]

    assert {"ADMIN_CREDIT", "DEPOSIT", "WITHDRAWAL"} <= {row["type"] for row in everything["items"]}
    assert [row_id for page in pages for row_id in _ids(page["items"])] == _ids(everything["items"])
    assert pages[1]["pagination"] == {
        "page": 2,
        "limit": 2,
        "total": everything["pagination"]["total"],
        "totalPages": -(-everything["pagination"]["total"] // 2),
    }
    assert pages[-1]["items"] == []


def test_ledger_lists_staff_credits_by_their_type_in_cents(http: Http, world: World):
    wallet_admin_credit(merchant=world.shop.merchant, amount=Decimal(7), reason="a whole number")

    response = http.get(
        "/v1/ledger/transactions", {"type": "ADMIN_CREDIT"}, headers=world.shop.headers
    )

    assert [(row["type"], row["amount"]["usd"]) for row in ok(response)["items"]] == [
        ("ADMIN_CREDIT", Decimal("7.00")),
        ("ADMIN_CREDIT", Decimal("5000.00")),
    ]
    assert b'"usd":7.00,' in response.content
    assert b'"fee":0.00,' in response.content


@pytest.mark.parametrize(("kind", "rows"), [("deposits", 3), ("withdrawals", 3)])
def test_crypto_before_pages_walk_every_row_once(http: Http, world: World, kind: str, rows: int):
    route, headers = f"/secure/crypto/{kind}", world.shop.headers
    query = {"platformId": world.user_id}
    everything = ok(http.get(route, query | {"limit": 100}, headers=headers))[kind]
    walked, before = [], None
    while True:
        page = ok(
            http.get(
                route,
                query | {"limit": 1, **({"before": before} if before else {})},
                headers=headers,
            )
        )
        walked += _ids(page[kind])
        before = page["nextBefore"]
        if before is None:
            break

    assert len(everything) == rows
    assert walked == _ids(everything)


@pytest.mark.parametrize("route", ["/secure/market", "/client/market"])
def test_market_second_page_follows_the_first(http: Http, world: World, route: str):
    headers = headers_of(world, "merchant" if route.startswith("/secure") else "client")
    both = ok(http.get(route, {"perPage": 10, "sort": "priceAsc"}, headers=headers))["items"]
    first, second = (
        ok(http.get(route, {"perPage": 5, "page": page, "sort": "priceAsc"}, headers=headers))[
            "items"
        ]
        for page in (1, 2)
    )

    assert _ids(first) + _ids(second) == _ids(both)
    assert len(second) == 5


@pytest.mark.parametrize("who", ["merchant", "client"])
def test_inventory_second_page_follows_the_first(http: Http, world: World, who: str):
    route = "/secure/inventory" if who == "merchant" else "/client/inventory"
    base = {"tradeUrl": trade_url(OWNER)} if who == "merchant" else {}
    headers = headers_of(world, who)
    whole = ok(http.get(route, base | {"limit": -1, "sort": "nameAsc"}, headers=headers))
    pages = [
        ok(http.get(route, base | {"limit": 2, "page": page, "sort": "nameAsc"}, headers=headers))
        for page in (1, 2)
    ]

    assert len(whole["inventory"]) >= 3
    assert [row["id"] for page in pages for row in page["inventory"]] == [
        row["id"] for row in whole["inventory"][:4]
    ]


def test_funding_lookup_answers_the_row_the_list_shows(http: Http, world: World):
    listed = ok(
        http.get("/v1/ledger/transactions", {"type": "DEPOSIT"}, headers=world.shop.headers)
    )
    row = ok(http.get(f"/v1/ledger/transactions/{world.funding_id}", headers=world.shop.headers))
    shown = next(item for item in listed["items"] if item["id"] == world.funding_id)

    assert (row["type"], row["status"], row["amount"]) == (
        shown["type"],
        shown["status"],
        shown["amount"],
    )


@pytest.mark.parametrize("route", ["/secure/market/item", "/client/market/item"])
def test_market_item_second_page_follows_the_first(http: Http, world: World, route: str):
    headers = headers_of(world, "merchant" if route.startswith("/secure") else "client")
    query = {"itemId": world.listed_item["reference"]}
    both = ok(http.get(route, query | {"perPage": 2}, headers=headers))
    first, second = (
        ok(http.get(route, query | {"perPage": 1, "page": page}, headers=headers))
        for page in (1, 2)
    )

    assert _ids(first) + _ids(second) == _ids(both)
    assert len(both) == 2


@pytest.mark.parametrize("route", ["/secure/market/item", "/client/market/item"])
def test_market_item_is_cached_until_the_market_version_moves(http: Http, world: World, route: str):
    """Without Redis the request's round trip reads no market version: the file cache's is."""
    headers = headers_of(world, "merchant" if route.startswith("/secure") else "client")
    query = {"itemId": world.listed_item["reference"]}
    first = ok(http.get(route, query, headers=headers))
    SandboxListing.objects.filter(item_id=query["itemId"]).update(price=Decimal("1.00"))
    assert ok(http.get(route, query, headers=headers)) == first

    market_version_bump()

    assert {row["offer"]["price"] for row in ok(http.get(route, query, headers=headers))} == {
        Decimal("1.05")
    }
