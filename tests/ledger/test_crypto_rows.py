"""The ledger as the crypto side fills it: a real sandbox deposit and a cashout that fails and is
refunded appear as DEPOSIT, WITHDRAWAL and REFUND rows beside the staff credit that funded the
merchant."""

from decimal import Decimal

import pytest

from crypto.models import CryptoDeposit, CryptoWithdrawal
from tests.crypto.conftest import USER, cashout_body, data, deposit_address, send
from tests.ledger.conftest import ledger
from wallet.selectors import wallet_invariants_check

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_eager_celery")]


def by_type(page: dict) -> dict[str, dict]:
    return {row["type"]: row for row in page["items"]}


def test_crypto_movements_are_ledger_rows(api, desk, alice_funded):
    address = deposit_address(desk, alice_funded, "BSC")["address"]
    sent = data(send(desk, alice_funded, "BSC", address, "3.5", token="USDT", confirmations=15))
    deposit = CryptoDeposit.objects.get(pk=sent["deposit"]["id"])
    body = cashout_body(platformId=USER, amountCents=2500)
    cashout = data(desk.post("/secure/crypto/withdraw", body, headers=alice_funded.headers))
    tx_hash = CryptoWithdrawal.objects.get(pk=cashout["id"]).tx_hash
    data(desk.post(f"/sandbox/crypto/transfers/{tx_hash}/reorg", headers=alice_funded.headers))

    rows = by_type(ledger(api, alice_funded))

    assert set(rows) == {"ADMIN_CREDIT", "DEPOSIT", "WITHDRAWAL", "REFUND"}
    assert rows["ADMIN_CREDIT"]["amount"]["usd"] == Decimal("1000.00")
    assert rows["DEPOSIT"]["status"] == "COMPLETED"
    assert rows["DEPOSIT"]["amount"] == {
        "usd": Decimal("3.50"),
        "crypto": "3.500000",
        "token": "USDT",
        "chain": "BSC",
        "exchangeRate": "1.00",
    }
    assert rows["DEPOSIT"]["txnHash"] == deposit.tx_hash
    assert rows["DEPOSIT"]["timestamps"]["completed"] is not None
    assert rows["WITHDRAWAL"]["status"] == "FAILED"
    assert rows["WITHDRAWAL"]["amount"]["usd"] == Decimal("25.00")
    assert rows["WITHDRAWAL"]["address"] == cashout["address"]
    assert rows["WITHDRAWAL"]["amount"]["exchangeRate"] == "1.00"
    assert rows["REFUND"]["status"] == "COMPLETED"
    assert rows["REFUND"]["amount"]["exchangeRate"] == "1.00"
    assert rows["ADMIN_CREDIT"]["amount"]["exchangeRate"] is None
    assert [row["type"] for row in ledger(api, alice_funded, type="DEPOSIT")["items"]] == [
        "DEPOSIT"
    ]
    assert wallet_invariants_check().clean
