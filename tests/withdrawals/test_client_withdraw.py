"""What a withdrawal looks like when it is created (contract 2.2, 4.6, 4.17) and right after the
merchant's answer to its approval callback (contract 3, 6)."""

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from standardwebhooks.webhooks import Webhook

from merchants.models import Client
from sandbox.models import SandboxPurchase
from tests.factories import platform_id, trade_url
from tests.withdrawals.conftest import (
    client_headers,
    make_listing,
    make_rust_listing,
    money,
    ok_data,
    wallet_clean,
)
from trading.models import Trade
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

FRESH_ITEM_KEYS = {"id", "offer", "appid", "tradable", "amount", "status"}
RESOLVED_KEYS = {"name", "marketHashName", "type", "iconUrl"}


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def two_listings(catalog_item):
    return make_listing(catalog_item, "10.00"), make_listing(catalog_item, "19.99")


def test_a_fresh_self_buy_shows_what_was_submitted_and_the_items_names(
    desk, alice_funded, two_listings, hooks, catalog_item
):
    first, second = two_listings  # 10.50 and 20.99 (19.99 x 1.05 = 20.9895, rounded up)
    hooks.answer = lambda _: (503, b"")  # no decision yet: the trade stays initiated
    response = desk.post(
        "/secure/buy",
        {
            "tradeUrl": trade_url(42),
            "items": [
                {"itemId": first.id, "price": Decimal("10.50"), "externalId": "line-1"},
                {"itemId": second.id, "price": Decimal("20.99")},
            ],
            "externalId": "buy-1",
        },
        headers=alice_funded.headers,
    )
    trade = ok_data(response)
    named = {
        "name": catalog_item.name,
        "marketHashName": catalog_item.market_hash_name,
        "type": catalog_item.item_type,
        "iconUrl": catalog_item.icon_url,
    }
    assert trade["items"] == [
        {
            **named,
            "id": first.id,
            "externalId": "line-1",
            "appid": 730,
            "tradable": True,
            "amount": 1,
            "status": "initiated",
            "offer": {"price": Decimal("10.50"), "delivery": "standard"},
        },
        {
            **named,
            "id": second.id,
            "appid": 730,
            "tradable": True,
            "amount": 1,
            "status": "initiated",
            "offer": {"price": Decimal("20.99"), "delivery": "standard"},
        },
    ]
    for row in trade["items"]:
        assert set(row) - {"externalId"} == FRESH_ITEM_KEYS | RESOLVED_KEYS
    assert trade["totalPrice"] == Decimal("31.49")
    assert trade["type"] == "withdraw"
    assert trade["source"] == "self"
    assert trade["status"] == "initiated"
    assert trade["game"] == "730"
    assert trade["externalId"] == "buy-1"
    assert trade["merchantId"] == str(alice_funded.merchant.pk)
    assert trade["clientPlatformID"] == platform_id(42)
    assert trade["clientTradeUrl"] == trade_url(42)
    assert "clientUserId" not in trade
    assert "externalClientUserId" not in trade
    assert "autoCancelAt" not in trade  # a self buy without autoCancel is never auto-cancelled
    for deposit_field in ("preCredit", "pendingCredit", "isInstant", "collateral"):
        assert deposit_field not in trade
    assert trade["createdAt"] == trade["updatedAt"]
    assert trade["createdAt"].endswith("Z")
    assert len(trade["createdAt"]) == len("2026-01-01T00:00:00.000Z")

    # The lock: available down, locked up, by exactly the total.
    assert money(alice_funded)["available"] == Decimal("968.51")
    assert money(alice_funded)["locked"] == Decimal("31.49")
    assert Transfer.objects.filter(kind="LOCK").count() == 1
    # The approval callback carried the same fresh trade.
    (initiated,) = hooks.of_type("trade.initiated")
    Webhook(alice_funded.merchant.webhook_secret).verify(initiated.body, initiated.headers)
    assert initiated.json["trade"]["id"] == trade["id"]
    assert initiated.json["trade"]["source"] == "self"
    assert initiated.json["sequence"] == 1
    assert [row["marketHashName"] for row in initiated.json["trade"]["items"]] == [
        catalog_item.market_hash_name
    ] * 2
    assert wallet_clean()


def test_items_are_named_from_creation_on(desk, alice_funded, two_listings, hooks, catalog_item):
    first, _ = two_listings
    created = ok_data(
        desk.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": first.id, "price": 10.5}]},
            headers=alice_funded.headers,
        )
    )
    assert created["items"][0]["marketHashName"] == catalog_item.market_hash_name
    assert created["items"][0]["name"] == catalog_item.name
    shown = ok_data(desk.get(f"/secure/trades/{created['id']}", headers=alice_funded.headers))
    assert shown["status"] == "pending"
    row = shown["items"][0]
    assert row["name"] == catalog_item.name
    assert row["marketHashName"] == catalog_item.market_hash_name
    assert row["type"] == catalog_item.item_type
    assert row["iconUrl"] == catalog_item.icon_url
    assert row["status"] == "pending"
    # The pending webhook carries the resolved item too, and the purchase was ordered.
    (pending,) = hooks.of_type("trade.pending")
    assert pending.json["trade"]["items"][0]["marketHashName"] == catalog_item.market_hash_name
    assert SandboxPurchase.objects.filter(listing_id=first.id).exists()
    assert money(alice_funded)["locked"] == Decimal("10.50")


def test_a_client_withdrawal_names_its_client(desk, alice_funded, two_listings, hooks):
    first, second = two_listings
    headers = client_headers(desk.api, alice_funded, partner=7, client_id="user-7")
    trade = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {
                "items": [
                    {"itemId": first.id, "price": Decimal("10.50")},
                    {"itemId": second.id, "price": Decimal("20.99"), "externalId": "x-2"},
                ]
            },
            headers=headers,
        )
    )
    client = Client.objects.get(merchant=alice_funded.merchant, platform_id=platform_id(7))
    assert trade["source"] == "client"
    assert trade["type"] == "withdraw"
    assert trade["clientUserId"] == str(client.pk)
    assert trade["externalClientUserId"] == "user-7"
    assert trade["clientPlatformID"] == platform_id(7)
    assert trade["clientTradeUrl"] == trade_url(7)
    assert trade["totalPrice"] == Decimal("31.49")
    assert [row["status"] for row in trade["items"]] == ["initiated", "initiated"]
    assert trade["items"][1]["externalId"] == "x-2"
    assert "externalId" not in trade["items"][0]
    # autoCancel defaults to 30 minutes after creation.
    assert when(trade["autoCancelAt"]) - when(trade["createdAt"]) == timedelta(minutes=30)
    assert money(alice_funded)["locked"] == Decimal("31.49")
    assert money(alice_funded)["available"] == Decimal("968.51")
    (initiated,) = hooks.of_type("trade.initiated")
    assert initiated.json["trade"]["source"] == "client"
    assert initiated.json["trade"]["clientUserId"] == str(client.pk)


def test_a_client_token_without_a_client_id_has_no_external_client_user_id(
    desk, alice_funded, two_listings
):
    first, _ = two_listings
    headers = client_headers(desk.api, alice_funded, partner=8)
    trade = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {"items": [{"itemId": first.id, "price": Decimal("10.50")}]},
            headers=headers,
        )
    )
    assert "externalClientUserId" not in trade
    assert "clientUserId" in trade


@pytest.mark.parametrize(("minutes", "expected"), [(30, 30), (45, 45), (719, 719), (720, None)])
def test_auto_cancel_at_is_created_at_plus_auto_cancel(
    desk, alice_funded, two_listings, minutes, expected
):
    first, _ = two_listings
    headers = client_headers(desk.api, alice_funded)
    trade = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {"items": [{"itemId": first.id, "price": Decimal("10.50")}], "autoCancel": minutes},
            headers=headers,
        )
    )
    if expected is None:
        assert "autoCancelAt" not in trade
        assert Trade.objects.get(pk=trade["id"]).auto_cancel_at is None
    else:
        assert when(trade["autoCancelAt"]) - when(trade["createdAt"]) == timedelta(minutes=expected)


def test_a_second_game_client_withdrawal_has_no_auto_cancel(desk, alice_funded, rust_item):
    listing = make_rust_listing(rust_item, "3.00")
    headers = client_headers(desk.api, alice_funded)
    trade = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {"items": [{"itemId": listing.id, "price": Decimal("3.15")}], "game": "252490"},
            headers=headers,
        )
    )
    assert trade["game"] == "252490"
    assert "autoCancelAt" not in trade
    assert trade["totalPrice"] == Decimal("3.15")


def test_the_game_is_accepted_as_a_number_too(desk, alice_funded, rust_item):
    listing = make_rust_listing(rust_item, "3.00")
    trade = ok_data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(42),
                "items": [{"itemId": listing.id, "price": Decimal("3.15")}],
                "game": 252490,
            },
            headers=alice_funded.headers,
        )
    )
    assert trade["game"] == "252490"


def test_two_merchants_lock_their_own_prices(desk, alice_funded, bob_funded, catalog_item):
    a, b = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.00")
    alice_trade = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {"items": [{"itemId": a.id, "price": Decimal("10.50")}]},
            headers=client_headers(desk.api, alice_funded),
        )
    )
    bob_trade = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {"items": [{"itemId": b.id, "price": Decimal("11.00")}]},
            headers=client_headers(desk.api, bob_funded),
        )
    )
    assert alice_trade["merchantId"] == str(alice_funded.merchant.pk)
    assert bob_trade["merchantId"] == str(bob_funded.merchant.pk)
    assert alice_trade["clientUserId"] != bob_trade["clientUserId"]
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert money(bob_funded)["locked"] == Decimal("11.00")
    assert money(alice_funded)["available"] == Decimal("989.50")
    assert money(bob_funded)["available"] == Decimal("989.00")
    assert wallet_clean()


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ((402, b""), "MERCHANT_REJECTED"),
        ((409, b"{}"), "MERCHANT_REJECTED"),
        ((200, b'{"action": "reject", "reason": "no funds"}'), "MERCHANT_REJECTED"),
    ],
)
def test_a_rejected_withdrawal_fails_and_releases_its_lock(
    desk, alice_funded, two_listings, hooks, answer, error
):
    first, second = two_listings
    hooks.answer = lambda _: answer
    created = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {
                "items": [
                    {"itemId": first.id, "price": Decimal("10.50")},
                    {"itemId": second.id, "price": Decimal("20.99")},
                ]
            },
            headers=client_headers(desk.api, alice_funded),
        )
    )
    assert created["status"] == "initiated"
    trade = Trade.objects.get(pk=created["id"])
    assert trade.status == "failed"
    assert trade.error == error
    assert {i.status for i in trade.items.all()} == {"failed"}
    assert {i.error for i in trade.items.all()} == {error}
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.failed"]
    # Nothing was bought: both listings are still on the market.
    assert not SandboxPurchase.objects.exists()
    assert wallet_clean()


def test_a_silent_callback_url_times_the_approval_out(
    desk, alice_funded, two_listings, hooks, clock_advance
):
    """5xx answers are failed attempts; after three the withdrawal fails APPROVAL_TIMEOUT."""
    from merchants.webhooks.delivery import webhook_event_deliver
    from merchants.webhooks.models import WebhookEvent

    first, _ = two_listings
    hooks.answer = lambda _: (500, b"")
    created = ok_data(
        desk.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": first.id, "price": 10.5}]},
            headers=alice_funded.headers,
        )
    )
    event = WebhookEvent.objects.get(is_approval=True)
    assert event.attempts == 1
    for _ in range(2):
        clock_advance(10)
        desk.run(lambda: webhook_event_deliver(event_id=str(event.pk)))
    trade = Trade.objects.get(pk=created["id"])
    assert trade.status == "failed"
    assert trade.error == "APPROVAL_TIMEOUT"
    assert len(hooks.of_type("trade.initiated")) == 3
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert wallet_clean()
