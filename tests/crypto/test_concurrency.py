"""Real threads against PostgreSQL: cashouts racing for one balance never overdraw it, one
requestId makes one cashout however many arrive at once, and a Solana capacity slot is taken
once."""

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from django.db import connection
from rest_framework.test import APIClient

from core.errors import DomainError
from crypto.models import CryptoWithdrawal, SolanaTokenAccount
from crypto.services.addresses import deposit_address_get
from merchants.models import Merchant
from tests.crypto.conftest import USER, cashout_body
from tests.factories import make_actor, platform_id
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 12
T = TypeVar("T")


def in_thread(work: Callable[[], T]) -> T:
    try:
        return work()
    finally:
        connection.close()


def race(works: list[Callable[[], T]]) -> list[T]:
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(lambda work: in_thread(work), works))


def funded_shop(balance: str) -> Any:
    actor = make_actor(name="Racer")
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url="http://127.0.0.1:9/hooks")
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal(balance), reason="test")
    return actor


def post_cashout(api_key: str, **fields: Any) -> Callable[[], tuple[int, dict[str, Any]]]:
    def work() -> tuple[int, dict[str, Any]]:
        body = cashout_body(platformId=USER, chain="BSC") | fields
        response = APIClient().post(
            "/secure/crypto/withdraw", body, format="json", headers={"api-key": api_key}
        )
        return response.status_code, response.json()

    return work


def test_cashouts_racing_for_one_balance_cannot_overdraw_it():
    shop = funded_shop("100.00")
    results = race(
        [post_cashout(shop.api_key, requestId=f"race-{n:04d}", amountCents=2500) for n in range(12)]
    )

    codes = Counter(status for status, _ in results)
    assert codes == {200: 4, 400: 8}
    refused = [body["error"]["code"] for status, body in results if status == 400]
    assert set(refused) == {3003}
    balances = wallet_balances(merchant=shop.merchant)
    assert balances["available"] == Decimal("0.00")
    assert balances["locked"] == Decimal("100.00")
    assert CryptoWithdrawal.objects.count() == 4
    assert wallet_invariants_check().clean


def test_one_request_id_sent_at_once_makes_one_cashout():
    shop = funded_shop("100.00")
    results = race([post_cashout(shop.api_key, requestId="same-request-1") for _ in range(10)])

    assert Counter(status for status, _ in results) == {200: 10}
    assert len({body["data"]["id"] for _, body in results}) == 1
    assert CryptoWithdrawal.objects.count() == 1
    assert wallet_balances(merchant=shop.merchant)["locked"] == Decimal("25.00")
    assert wallet_invariants_check().clean


def test_the_last_solana_slot_is_taken_once(settings):
    settings.CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS = 3
    shop = make_actor(name="Slots")

    def ask(partner: int) -> Callable[[], str]:
        def work() -> str:
            try:
                deposit_address_get(
                    merchant=shop.merchant,
                    platform_id=platform_id(partner),
                    chain="SOL",
                    token="USDC",
                )
            except DomainError as exc:
                return exc.spec.key
            return "ok"

        return work

    outcomes = Counter(race([ask(partner) for partner in range(1, 11)]))

    assert outcomes == {"ok": 3, "ONCHAIN_ADDRESS_CAPACITY": 7}
    assert SolanaTokenAccount.objects.count() == 3
