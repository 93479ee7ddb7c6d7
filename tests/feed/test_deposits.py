"""``deposit {funding}``: each status change of a crypto deposit, as its funding, to the
merchant's sockets only."""

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Actor, platform_id
from tests.feed.harness import FeedClient

pytestmark = pytest.mark.django_db(transaction=True)

Connect = Callable[..., FeedClient]


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.content
    return response.json()["data"]


def test_a_crypto_deposit_reaches_its_merchant_as_its_funding_at_each_change(
    open_socket: Connect, api: APIClient, alice: Actor, bob: Actor
) -> None:
    alices, bobs = open_socket(alice.api_key), open_socket(bob.api_key)
    address = ok(
        api.get(
            "/secure/crypto/deposit-address",
            {"chain": "ETH", "token": "USDC", "platformId": platform_id(1)},
            headers=alice.headers,
        )
    )["address"]

    transfer = {"chain": "ETH", "token": "USDC", "address": address, "amount": "30.5"}
    sent = ok(
        api.post(
            "/sandbox/crypto/transfers",
            transfer | {"confirmations": 3},
            format="json",
            headers=alice.headers,
        )
    )
    pending = alices.next("deposit")["funding"]
    ok(
        api.post(
            f"/sandbox/crypto/transfers/{sent['txHash']}/confirmations",
            {"confirmations": 12},
            format="json",
            headers=alice.headers,
        )
    )
    completed = alices.next("deposit")["funding"]

    assert pending == {
        "id": pending["id"],
        "merchantId": str(alice.merchant.pk),
        "status": "PENDING",
        "amounts": {"usd": "30.50", "token": "30.500000"},
        "asset": {"token": "USDC", "chain": "ETH", "exchangeRateUsdPerToken": "1"},
        "address": address,
        "txnHash": sent["txHash"],
        "creditedUsd": "0.00",
        "overpaymentUsd": "0.00",
        "createdAt": pending["createdAt"],
        "completedAt": None,
    }
    assert completed == pending | {
        "status": "COMPLETED",
        "creditedUsd": "30.50",
        "completedAt": completed["completedAt"],
    }
    assert completed["completedAt"] is not None
    ledger_row = ok(api.get(f"/v1/ledger/transactions/{pending['id']}", headers=alice.headers))
    assert ledger_row["status"] == "COMPLETED"
    assert ledger_row["timestamps"]["created"] == pending["createdAt"]
    assert bobs.pending() == []
