from decimal import Decimal

import pytest
from standardwebhooks.webhooks import Webhook

from tests.factories import trade_url
from tests.withdrawals.conftest import make_listing
from wallet.selectors import wallet_balances, wallet_invariants_check

pytestmark = pytest.mark.django_db


def test_self_buy_goes_from_initiated_to_completed_with_settlement(
    api, alice_funded, catalog_item, hooks, django_capture_on_commit_callbacks
):
    listing = make_listing(catalog_item, "10.00")  # fee 5 % -> 10.50
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.50}]},
            format="json",
            headers=alice_funded.headers,
        )
    assert response.status_code == 200, response.json()
    trade = response.json()["data"]
    assert trade["status"] == "initiated"
    assert trade["items"] == [
        {
            "id": listing.id,
            "name": catalog_item.name,
            "marketHashName": catalog_item.market_hash_name,
            "type": catalog_item.item_type,
            "iconUrl": catalog_item.icon_url,
            "appid": 730,
            "tradable": True,
            "amount": 1,
            "status": "initiated",
            "offer": {"price": 10.5, "delivery": "standard"},
        }
    ]
    # The approval callback went out signed; the 2xx answer approved it and the purchase ran.
    initiated = hooks.of_type("trade.initiated")[0]
    Webhook(alice_funded.merchant.webhook_secret).verify(initiated.body, initiated.headers)
    assert initiated.json["trade"]["source"] == "self"
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]
    balances = wallet_balances(merchant=alice_funded.merchant)
    assert balances["available"] == Decimal("989.50")
    assert balances["locked"] == Decimal("10.50")

    for event, status in (
        ("purchased", "active"),
        ("accepted", "hold"),
        ("hold_ended", "completed"),
    ):
        with django_capture_on_commit_callbacks(execute=True):
            moved = api.post(
                f"/sandbox/trades/{trade['id']}/events",
                {"event": event},
                format="json",
                headers=alice_funded.headers,
            )
        assert moved.status_code == 200, moved.json()
        assert moved.json()["data"]["status"] == status

    balances = wallet_balances(merchant=alice_funded.merchant)
    assert balances["available"] == Decimal("989.50")
    assert balances["locked"] == Decimal("0.00")
    assert [r.json["sequence"] for r in hooks.received] == [1, 2, 3, 4, 5]
    assert wallet_invariants_check().clean
