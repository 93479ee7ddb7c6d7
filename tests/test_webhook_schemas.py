"""What the service really sends to a callback URL, checked against the OpenAPI document's
``webhooks`` (OpenAPI 3.1): a withdrawal moved to
completion (its approval callback and every trade event), a crypto deposit, a client's cashout
(its approval callback and the events after it) and the callback URL's test event, each body
valid against its webhook's schema (objects closed, formats checked) and each signature
verifying with the Standard Webhooks library, as docs/webhooks.md tells receivers to verify."""

from decimal import Decimal
from typing import Any, get_args

import pytest
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient
from standardwebhooks.webhooks import Webhook

from crypto.representations import DepositStatus, WithdrawalStatus
from merchants.models import Merchant
from merchants.webhooks.callbacks import merchant_callback_url_set
from tests.factories import Actor, make_actor, trade_url
from tests.test_openapi_docs import FORMATS, _strict
from tests.withdrawals.conftest import Desk, client_headers, funded, make_listing, ok_data
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem, Status

pytestmark = pytest.mark.django_db

ETH_RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"


@pytest.fixture(scope="module")
def document(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        answer = APIClient().get("/openapi.json")
    assert answer.status_code == 200
    return answer.json()


@pytest.fixture
def hooks():
    with receiver() as state:
        yield state


@pytest.fixture
def shop(db: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Shop", is_verified=True), "1000.00", hooks.url)


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    from celery import current_app

    current_app.conf.task_always_eager = True
    yield Desk(api, django_capture_on_commit_callbacks)
    current_app.conf.task_always_eager = False


def webhook_body_schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    body = document["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]
    return dict(body["schema"])


WEBHOOK_OF = {
    "trade": "trade",
    "crypto_deposit": "cryptoDeposit",
    "crypto_withdrawal": "cryptoWithdrawal",
}


def webhook_name(payload: dict[str, Any]) -> str:
    if payload == {"test": True}:
        return "callbackUrlTest"
    return WEBHOOK_OF[str(payload["type"]).split(".")[0]]


def assert_valid(document: dict[str, Any], received: list[Any], secret: str) -> list[str]:
    components = _strict(document["components"])
    types = []
    for delivery in received:
        payload = delivery.json
        schema = webhook_body_schema(document, webhook_name(payload))
        validator = Draft202012Validator(
            {**_strict(schema), "components": components}, format_checker=FORMATS
        )
        errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(payload)]
        assert errors == [], (payload, errors)
        Webhook(secret).verify(delivery.body, delivery.headers)  # raises when it does not verify
        types.append(str(payload.get("type", "test")))
    return types


def test_trade_webhooks_and_the_approval_callback_match_the_document(document, desk, shop, hooks):
    item = CatalogItem.objects.create(
        id="730-000001",
        game=730,
        market_hash_name="AK-47 | Redline (Field-Tested)",
        name="AK-47 | Redline",
        item_type="Rifle",
        rarity="Classified",
        rarity_color="d32ce6",
        exterior="Field-Tested",
        icon_url="https://cdn.sandbox.invalid/a.png",
        reference_price=Decimal("40.00"),
    )
    listing = make_listing(item, "10.00")
    trade = ok_data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(42),
                "items": [{"itemId": listing.id, "price": Decimal("10.50")}],
                "externalId": "schema-buy",
            },
            headers=shop.headers,
        )
    )
    for event in ("purchased", "accepted", "hold_ended"):
        ok_data(
            desk.post(
                f"/sandbox/trades/{trade['id']}/events", {"event": event}, headers=shop.headers
            )
        )

    types = assert_valid(document, hooks.received, shop.merchant.webhook_secret)
    assert types[0] == "trade.initiated"  # the approval callback, answered 2xx: approved
    assert {"trade.pending", "trade.active", "trade.hold", "trade.completed"} <= set(types)
    approval = document["webhooks"]["tradeApproval"]["post"]
    assert approval["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/TradeWebhook"
    }


def test_crypto_webhooks_and_the_cashout_approval_match_the_document(document, desk, shop, hooks):
    headers = client_headers(desk.api, shop, partner=1)
    address = ok_data(
        desk.get("/client/crypto/deposit-address", params={"chain": "ETH"}, headers=headers)
    )["address"]
    ok_data(
        desk.post(
            "/sandbox/crypto/transfers",
            {
                "chain": "ETH",
                "token": "USDC",
                "address": address,
                "amount": "40",
                "confirmations": 100,
            },
            headers=shop.headers,
        )
    )
    cashout = {
        "chain": "ETH",
        "token": "USDC",
        "address": ETH_RECIPIENT,
        "amountCents": 2500,
        "requestId": "schema-cashout",
    }
    ok_data(desk.post("/client/crypto/withdraw", cashout, headers=headers))

    types = assert_valid(document, hooks.received, shop.merchant.webhook_secret)
    assert "crypto_deposit.completed" in types
    assert "crypto_withdrawal.awaiting_approval" in types  # the approval callback
    assert any(
        t.startswith("crypto_withdrawal.") and t != "crypto_withdrawal.awaiting_approval"
        for t in types
    )


def test_the_callback_url_test_matches_the_document(document, db, hooks):
    actor = make_actor(name="Fresh")
    merchant_callback_url_set(merchant=actor.merchant, url=hooks.url)

    actor.merchant.refresh_from_db()
    assert assert_valid(document, hooks.received, actor.merchant.webhook_secret) == ["test"]
    assert Merchant.objects.get(pk=actor.merchant.pk).callback_url == hooks.url


def test_the_documented_event_types_are_the_domain_statuses(document):
    def enum(component: str) -> list[str]:
        return list(document["components"]["schemas"][component]["properties"]["type"]["enum"])

    assert enum("TradeWebhook") == [f"trade.{s}" for s in Status.values] + ["trade.updated"]
    assert enum("CryptoDepositWebhook") == [f"crypto_deposit.{s}" for s in get_args(DepositStatus)]
    assert enum("CryptoWithdrawalWebhook") == [
        f"crypto_withdrawal.{s}" for s in get_args(WithdrawalStatus)
    ]


def test_the_document_declares_every_webhook_and_names_the_guide(document):
    assert document["openapi"] == "3.1.0"
    assert "x-webhooks" not in document
    assert set(document["webhooks"]) == {
        "trade",
        "tradeApproval",
        "cryptoDeposit",
        "cryptoWithdrawal",
        "cryptoWithdrawalApproval",
        "callbackUrlTest",
    }
    for name, path_item in document["webhooks"].items():
        assert "(/docs/webhooks)" in path_item["post"]["description"], name
    assert "(/docs/webhooks)" in document["info"]["description"]
