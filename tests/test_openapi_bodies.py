"""Every operation's success bodies against the OpenAPI document.

The schemathesis run of tests/test_openapi.py sends generated requests, and generated requests
seldom succeed: a withdrawal needs a listing that exists, a cancel a trade in flight. Here each
operation outside the sandbox is called with requests that succeed, over a seeded world, with
trades moved through their states, and every answer is checked against the operation's
documented status, content type, headers and body schema (schemathesis's conformance checks
resolve the document's ``$ref`` components). ``test_every_operation_is_walked`` checks that the
walks below cover every such operation the document lists.
"""

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from merchants.models import Merchant
from sandbox.services.seeding import sandbox_seed
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, make_actor, platform_id, trade_url
from tests.test_openapi import CONFORMANCE, schema, wsgi_in_test_transaction  # noqa: F401
from tests.trading.helpers import clock_move
from tests.withdrawals.receiver import Receiver, receiver
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.usefixtures("wsgi_in_test_transaction")

Operation = tuple[str, str]

CATALOG: set[Operation] = {
    ("GET", "/secure/prices"),
    ("GET", "/secure/market"),
    ("GET", "/client/market"),
    ("GET", "/secure/market/item"),
    ("GET", "/client/market/item"),
    ("GET", "/client/market/suggestions"),
    ("POST", "/secure/check-tradeurl"),
    ("GET", "/secure/inventory"),
    ("GET", "/client/inventory"),
}
WITHDRAWALS: set[Operation] = {
    ("POST", "/secure/buy"),
    ("POST", "/client/trading/withdraw"),
    ("POST", "/secure/buy/quick"),
    ("POST", "/client/trading/withdraw/quick"),
    ("POST", "/secure/buy/{tradeId}/cancel"),
    ("POST", "/secure/buy/{tradeId}/items/{itemId}/cancel"),
    ("POST", "/client/trading/withdraw/{tradeId}/cancel"),
    ("POST", "/client/trading/withdraw/{tradeId}/items/{itemId}/cancel"),
    ("GET", "/secure/trades"),
    ("GET", "/client/trades"),
    ("GET", "/secure/trades/{tradeId}"),
    ("GET", "/client/trades/{id}"),
}
DEPOSITS: set[Operation] = {
    ("POST", "/secure/sell"),
    ("POST", "/client/trading/deposit"),
}
MONEY: set[Operation] = {
    ("GET", "/secure/crypto/deposit-address"),
    ("GET", "/client/crypto/deposit-address"),
    ("GET", "/secure/crypto/deposits"),
    ("GET", "/client/crypto/deposits"),
    ("POST", "/secure/crypto/withdraw"),
    ("POST", "/client/crypto/withdraw"),
    ("GET", "/secure/crypto/withdrawals"),
    ("GET", "/client/crypto/withdrawals"),
    ("GET", "/v1/ledger/transactions"),
    ("GET", "/v1/ledger/transactions/{transactionId}"),
    ("GET", "/v1/wallets/me/balance"),
}
MERCHANT: set[Operation] = {
    ("POST", "/auth/authenticate-client"),
    ("GET", "/secure/webhooks/events"),
    ("POST", "/secure/webhooks/events/{id}/resend"),
    ("POST", "/client/verification/start"),
    ("GET", "/client/verification/status"),
    ("POST", "/client/verification/link"),
    ("GET", "/health"),
}
USER = 11  # the partner behind the client token
OWNER = 12  # another platform user, whose items the merchant sells itself
ETH_RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"


class Walk:
    """Calls operations as the document names them (the WSGI application, inside the test's
    transaction, running the work each call hands over on commit) and checks every answer
    against the document; remembers what it called."""

    def __init__(self, capture: Any) -> None:
        self.capture = capture
        self.walked: set[Operation] = set()

    def __call__(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str],
        path_parameters: dict[str, str] | None = None,
        query: dict[str, Any] | None = None,
        body: Any = None,
        status: int = 200,
    ) -> Any:
        fields: dict[str, Any] = {"headers": headers}
        if path_parameters is not None:
            fields["path_parameters"] = path_parameters
        if query is not None:
            fields["query"] = query
        if body is not None:
            fields |= {"body": body, "media_type": "application/json"}
        case = schema[path][method].Case(**fields)
        with self.capture(execute=True):
            response = case.call_and_validate(checks=CONFORMANCE)
        assert response.status_code == status, response.text
        self.walked.add((method, path))
        return json.loads(response.content, parse_float=Decimal)["data"]


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def walk(django_capture_on_commit_callbacks: Any) -> Walk:
    return Walk(django_capture_on_commit_callbacks)


@pytest.fixture
def world(db: None) -> None:
    sandbox_seed(items=60, listings=300)


@pytest.fixture
def shop(world: None, hooks: Receiver) -> Actor:
    """A verified merchant with money, instant deposits and a receiver that approves."""
    actor = make_actor(name="Shop", is_verified=True)
    Merchant.objects.filter(pk=actor.merchant.pk).update(
        callback_url=hooks.url, instant_deposits_enabled=True
    )
    actor.merchant.refresh_from_db()
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal("5000.00"), reason="test")
    return actor


def client_headers(walk: Walk, shop: Actor, partner: int = USER, **fields: Any) -> dict[str, str]:
    body = {"clientPlatformId": platform_id(partner), "clientTradeUrl": trade_url(partner)}
    token = walk("POST", "/auth/authenticate-client", headers=shop.headers, body=body | fields)
    return {"Authorization": f"Bearer {token['token']}"}


def _first(rows: list[dict[str, Any]], **wanted: Any) -> dict[str, Any]:
    return next(row for row in rows if all(row.get(k) == v for k, v in wanted.items()))


def test_catalog_and_inventories(walk, shop):
    client = client_headers(walk, shop)
    names = [row["marketHashName"] for row in _listings(walk, shop, 3)]
    for partner in (USER, OWNER):
        _owns(walk, shop, partner, names)

    for game in (730, 252490):
        book = walk("GET", "/secure/prices", headers=shop.headers, query={"game": game})
        assert book
        page = walk("GET", "/secure/market", headers=shop.headers, query={"game": str(game)})
        assert page["items"]
        walk("GET", "/client/market", headers=client, query={"game": str(game), "perPage": 5})
        walk(
            "GET",
            "/secure/inventory",
            headers=shop.headers,
            query={"tradeUrl": trade_url(OWNER), "game": str(game), "limit": -1},
        )
        walk("GET", "/client/inventory", headers=client, query={"game": str(game)})
    first_game = walk("GET", "/secure/market", headers=shop.headers, query={"perPage": 300})
    phased = next((row for row in first_game["items"] if "doppler" in row), first_game["items"][0])
    for headers, route in ((shop.headers, "/secure/market/item"), (client, "/client/market/item")):
        listings = walk(
            "GET", route, headers=headers, query={"itemId": phased["offer"]["reference"]}
        )
        assert listings
    walk(
        "GET",
        "/client/market/suggestions",
        headers=client,
        query={"q": phased["marketHashName"][:3]},
    )
    walk(
        "POST",
        "/secure/check-tradeurl",
        headers=shop.headers,
        body={"tradeurl": trade_url(OWNER)},
    )

    assert walk.walked >= CATALOG


def _listings(walk: Walk, shop: Actor, count: int) -> list[dict[str, Any]]:
    """First-game listings of different items, delivered the standard way."""
    page = walk("GET", "/secure/market", headers=shop.headers, query={"perPage": 300})
    chosen: dict[str, dict[str, Any]] = {}
    for row in page["items"]:
        if row["offer"]["delivery"] == "standard" and row["offer"]["reference"] not in chosen:
            chosen[row["offer"]["reference"]] = row
    assert len(chosen) >= count
    return list(chosen.values())[:count]


def _items(listings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"itemId": row["id"], "price": float(row["offer"]["price"]), "externalId": f"line-{n}"}
        for n, row in enumerate(listings, start=1)
    ]


def test_withdrawals_their_history_and_cancels(walk, shop):
    client = client_headers(walk, shop)
    a, b, c, d, e, f = (_listings(walk, shop, 6)[n : n + 1] for n in range(6))

    held = walk(
        "POST",
        "/secure/buy",
        headers=shop.headers,
        body={"tradeUrl": trade_url(OWNER), "items": _items(a), "externalId": "held"},
    )
    for event in ("purchased", "accepted"):
        walk(
            "POST",
            "/sandbox/trades/{tradeId}/events",
            headers=shop.headers,
            path_parameters={"tradeId": held["id"]},
            body={"event": event},
        )
    self_buy = walk(
        "POST",
        "/secure/buy",
        headers=shop.headers,
        body={"tradeUrl": trade_url(OWNER), "items": _items(b + c)},
    )
    own = walk(
        "POST",
        "/client/trading/withdraw",
        headers=client,
        body={"items": _items(d + e), "autoCancel": 60},
    )
    for route, headers, extra in (
        ("/secure/buy/quick", shop.headers, {"tradeUrl": trade_url(OWNER)}),
        ("/client/trading/withdraw/quick", client, {}),
    ):
        quick = walk(
            "POST",
            route,
            headers=headers,
            body={
                "itemId": f[0]["offer"]["reference"],
                "maxPrice": float(f[0]["offer"]["price"] * 2),
                "amount": 1,
                **extra,
            },
        )
        assert quick["type"] == "withdraw"

    # Too soon: a result whose rows failed, with their reason.
    early = walk(
        "POST",
        "/client/trading/withdraw/{tradeId}/cancel",
        headers=client,
        path_parameters={"tradeId": own["id"]},
    )
    assert {row["status"] for row in early["items"]} == {"failed"}
    clock_move(31 * 60)
    for route, headers, trade in (
        ("/client/trading/withdraw/{tradeId}/items/{itemId}/cancel", client, own),
        ("/secure/buy/{tradeId}/items/{itemId}/cancel", shop.headers, self_buy),
    ):
        one = walk(
            "POST",
            route,
            headers=headers,
            path_parameters={"tradeId": trade["id"], "itemId": trade["items"][0]["id"]},
        )
        assert one["status"] == "cancelled"
    rest = walk(
        "POST",
        "/secure/buy/{tradeId}/cancel",
        headers=shop.headers,
        path_parameters={"tradeId": self_buy["id"]},
    )
    assert rest["cancelled"] == 1

    assert walk("GET", "/secure/trades", headers=shop.headers, query={"limit": 1})["nextCursor"]
    assert walk("GET", "/client/trades", headers=client)["items"]
    one = walk(
        "GET", "/secure/trades/{tradeId}", headers=shop.headers, path_parameters={"tradeId": "held"}
    )
    assert one["status"] == "hold"
    assert "holdEndDate" in one
    many = walk(
        "GET",
        "/secure/trades/{tradeId}",
        headers=shop.headers,
        path_parameters={"tradeId": f"{held['id']},{self_buy['id']}"},
    )
    assert len(many) == 2
    walk("GET", "/client/trades/{id}", headers=client, path_parameters={"id": own["id"]})

    assert walk.walked >= WITHDRAWALS


def _accepted(inventory: dict[str, Any]) -> dict[str, Any]:
    return next(row for row in inventory["inventory"] if row["offer"]["accepted"])


def _owns(walk: Walk, shop: Actor, partner: int, names: list[str]) -> None:
    """The user holds these catalog items (and one the catalog does not know)."""
    inventory = [{"marketHashName": name, "wear": 0.25} for name in names]
    walk(
        "POST",
        "/sandbox/platform/users",
        headers=shop.headers,
        body={
            "platformId": platform_id(partner),
            "inventory": [*inventory, {"marketHashName": "Unknown Thing"}],
        },
    )


def test_deposits_through_their_states(walk, shop):
    client = client_headers(walk, shop)
    names = [row["marketHashName"] for row in _listings(walk, shop, 2)]
    for partner in (USER, OWNER):
        _owns(walk, shop, partner, names)
    mine = walk("GET", "/client/inventory", headers=client, query={"limit": -1})
    theirs = walk(
        "GET",
        "/secure/inventory",
        headers=shop.headers,
        query={"tradeUrl": trade_url(OWNER), "limit": -1},
    )

    instant = walk(
        "POST",
        "/client/trading/deposit",
        headers=client,
        body={"items": [_deposit_item(_accepted(mine))], "isInstant": True},
    )
    assert "collateral" in instant
    sold = walk(
        "POST",
        "/secure/sell",
        headers=shop.headers,
        body={"tradeUrl": trade_url(OWNER), "items": [_deposit_item(_accepted(theirs))]},
    )
    walk(
        "POST",
        "/sandbox/trades/{tradeId}/events",
        headers=shop.headers,
        path_parameters={"tradeId": sold["id"]},
        body={"event": "accepted"},
    )
    held = walk(
        "GET",
        "/secure/trades/{tradeId}",
        headers=shop.headers,
        path_parameters={"tradeId": sold["id"]},
    )
    assert held["status"] == "hold"
    assert {"botInfo", "offerID", "holdEndDate"} <= set(held)

    assert walk.walked >= DEPOSITS


def _deposit_item(row: dict[str, Any]) -> dict[str, Any]:
    return {"itemId": row["id"], "price": float(row["offer"]["price"])}


def test_crypto_ledger_and_wallet(walk, shop):
    client = client_headers(walk, shop)
    user = platform_id(USER)
    address = walk(
        "GET",
        "/secure/crypto/deposit-address",
        headers=shop.headers,
        query={"chain": "ETH", "platformId": user},
    )
    assert (
        walk("GET", "/client/crypto/deposit-address", headers=client, query={"chain": "SOL"})[
            "chain"
        ]
        == "SOL"
    )
    sent = walk(
        "POST",
        "/sandbox/crypto/transfers",
        headers=shop.headers,
        body={
            "chain": "ETH",
            "token": "USDC",
            "address": address["address"],
            "amount": "40",
            "confirmations": 100,
        },
    )
    assert sent["deposit"]["status"] == "completed"
    walk("GET", "/secure/crypto/deposits", headers=shop.headers, query={"platformId": user})
    assert walk("GET", "/client/crypto/deposits", headers=client)["deposits"]

    cashout = {
        "chain": "ETH",
        "token": "USDC",
        "address": ETH_RECIPIENT,
        "amountCents": 2500,
        "requestId": "req-00000001",
    }
    walk(
        "POST",
        "/secure/crypto/withdraw",
        headers=shop.headers,
        body={**cashout, "platformId": user},
        status=200,
    )
    walk(  # the same requestId again: the first cashout
        "POST",
        "/secure/crypto/withdraw",
        headers=shop.headers,
        body={**cashout, "platformId": user},
        status=200,
    )
    walk(
        "POST",
        "/client/crypto/withdraw",
        headers=client,
        body={**cashout, "requestId": "req-00000002"},
        status=200,
    )
    walk("GET", "/secure/crypto/withdrawals", headers=shop.headers, query={"platformId": user})
    assert walk("GET", "/client/crypto/withdrawals", headers=client)["withdrawals"]

    ledger = walk("GET", "/v1/ledger/transactions", headers=shop.headers)
    kinds = {row["type"] for row in ledger["items"]}
    assert {"DEPOSIT", "WITHDRAWAL", "ADMIN_CREDIT"} <= kinds
    funding = _first(ledger["items"], type="WITHDRAWAL")
    walk(
        "GET",
        "/v1/ledger/transactions/{transactionId}",
        headers=shop.headers,
        path_parameters={"transactionId": funding["id"]},
    )
    walk("GET", "/v1/wallets/me/balance", headers=shop.headers)

    assert walk.walked >= MONEY


def test_clients_webhooks_and_health(walk, shop):
    first = client_headers(walk, shop, USER, clientData={"kycHash": "sha256:ann"})
    second = client_headers(walk, shop, OWNER, clientData={"kycHash": "sha256:ann"})
    started = walk(
        "POST", "/client/verification/start", headers=first, body={"email": "ann@example.com"}
    )
    walk(
        "POST",
        "/sandbox/verification/{dossierId}",
        headers=shop.headers,
        path_parameters={"dossierId": started["dossierId"]},
        body={"status": "ACCEPTED"},
    )
    assert walk("GET", "/client/verification/status", headers=first)["latestProcess"]
    linked = walk(
        "POST", "/client/verification/link", headers=second, body={"email": "ann@example.com"}
    )
    assert linked["linkedIdentity"] is not None

    bought = walk(
        "POST",
        "/secure/buy",
        headers=shop.headers,
        body={"tradeUrl": trade_url(OWNER), "items": _items(_listings(walk, shop, 1))},
    )
    events = walk("GET", "/secure/webhooks/events", headers=shop.headers)["events"]
    delivered = _first(events, type="trade.pending", status="delivered")
    assert delivered["payload"]["trade"]["id"] == bought["id"]
    walk(
        "POST",
        "/secure/webhooks/events/{id}/resend",
        headers=shop.headers,
        path_parameters={"id": delivered["id"]},
    )
    walk("GET", "/health", headers={})

    assert walk.walked >= MERCHANT


def test_every_operation_is_walked(api):
    """Every operation outside the sandbox helpers has its walk above; a new one needs one."""
    paths = api.get("/openapi.json").json()["paths"]
    documented = {
        (method.upper(), path)
        for path, operations in paths.items()
        for method in operations
        if not path.startswith("/sandbox/")
    }

    assert documented == CATALOG | WITHDRAWALS | DEPOSITS | MONEY | MERCHANT
