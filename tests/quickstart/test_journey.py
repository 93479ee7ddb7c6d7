"""One merchant's whole journey over SQLite, through HTTP: a client token, a deposit that
completes, a buy that completes, a crypto deposit credited, the balance after each, and the
ledger that lists the money."""

from decimal import Decimal
from typing import Any

import pytest

from tests.factories import platform_id, trade_url
from tests.quickstart.conftest import Http, World, funded_merchant, ok, standard_listings
from wallet.selectors import wallet_invariants_check

pytestmark = pytest.mark.django_db

PARTNER = 31


def _balance(http: Http, headers: dict[str, str]) -> dict[str, Any]:
    return ok(http.get("/v1/wallets/me/balance", headers=headers))


def _events(http: Http, headers: dict[str, str], trade_id: str, *events: str) -> dict[str, Any]:
    trade: dict[str, Any] = {}
    for event in events:
        trade = ok(
            http.post(f"/sandbox/trades/{trade_id}/events", {"event": event}, headers=headers)
        )
    return trade


def test_a_merchant_trades_and_is_credited_end_to_end(http: Http, world: World):
    shop = funded_merchant("Journey", world.hooks.url, "1000.00")
    token = ok(
        http.post(
            "/auth/authenticate-client",
            {"clientPlatformId": platform_id(PARTNER), "clientTradeUrl": trade_url(PARTNER)},
            headers=shop.headers,
        )
    )["token"]
    client = {"Authorization": f"Bearer {token}"}
    listing, owned = standard_listings(http, shop, 730)[:2]
    ok(
        http.post(
            "/sandbox/platform/users",
            {
                "platformId": platform_id(PARTNER),
                "inventory": [{"marketHashName": owned["marketHashName"]}],
            },
            headers=shop.headers,
        )
    )
    assert _balance(http, shop.headers)["balance"] == Decimal("1000.00")

    [item] = ok(http.get("/client/inventory", {"acceptedOnly": "true"}, headers=client))[
        "inventory"
    ]
    deposit = ok(
        http.post(
            "/client/trading/deposit",
            {
                "items": [{"itemId": item["id"], "price": item["offer"]["price"]}],
                "externalId": "in-1",
            },
            headers=client,
        )
    )
    assert ok(http.get("/client/trades/in-1", headers=client))["status"] == "active"
    completed = _events(http, shop.headers, deposit["id"], "accepted", "hold_ended")
    assert completed["status"] == "completed"
    after_deposit = Decimal("1000.00") + deposit["totalPrice"]
    assert _balance(http, shop.headers)["balance"] == after_deposit

    bought = ok(
        http.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(PARTNER),
                "items": [{"itemId": listing["id"], "price": listing["offer"]["price"]}],
                "externalId": "out-1",
            },
            headers=shop.headers,
        )
    )
    assert ok(http.get("/secure/trades/out-1", headers=shop.headers))["status"] == "pending"
    done = _events(http, shop.headers, bought["id"], "purchased", "accepted", "hold_ended")
    assert done["status"] == "completed"
    after_buy = after_deposit - bought["totalPrice"]
    assert _balance(http, shop.headers)["balance"] == after_buy

    address = ok(http.get("/client/crypto/deposit-address", {"chain": "ETH"}, headers=client))
    sent = ok(
        http.post(
            "/sandbox/crypto/transfers",
            {
                "chain": "ETH",
                "token": "USDC",
                "address": address["address"],
                "amount": "25.50",
                "confirmations": 12,
            },
            headers=shop.headers,
        )
    )
    assert sent["deposit"]["status"] == "completed"
    assert _balance(http, shop.headers) == {
        "balance": after_buy + Decimal("25.50"),
        "pendingBalance": Decimal("0.00"),
        "escrowBalance": Decimal("0.00"),
        "currency": "USD",
    }
    ledger = ok(http.get("/v1/ledger/transactions", headers=shop.headers))
    assert [(row["type"], row["status"], row["amount"]["usd"]) for row in ledger["items"]] == [
        ("DEPOSIT", "COMPLETED", Decimal("25.50")),
        ("ADMIN_CREDIT", "POSTED", Decimal("1000.00")),
    ]
    assert wallet_invariants_check().clean
