"""Cashouts on a real EVM node: EIP-1559 transfers signed by the hot wallet, nonces taken under a
row lock by racing workers, a transaction left out of blocks replaced at higher fees with the same
nonce, and a transfer the token reverts (or would revert) refunded exactly once."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from rest_framework.test import APIClient

from crypto.evm.models import EvmAttempt, EvmSender, EvmTransaction
from crypto.keys import hot_wallet
from crypto.models import CryptoWithdrawal
from crypto.services.withdrawals import crypto_withdrawal_broadcast
from crypto.tasks import evm_sweep_transactions, sweep_withdrawals
from ledger.models import Funding
from tests.crypto.conftest import RECIPIENT, USER, cashout_body, clean, data, money
from tests.crypto.evm.chain import Chain
from tests.factories import make_actor
from wallet.models import Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import wallet_admin_credit

CONFIRMATIONS = 12


def cashout(desk, actor, **fields: Any) -> dict:
    """A self cashout, as it is once the broadcast its approval scheduled has run."""
    body = cashout_body(platformId=USER, **fields)
    made = data(desk.post("/secure/crypto/withdraw", body, headers=actor.headers))
    return shown(desk, actor, made["id"])


def shown(desk, actor, withdrawal_id: str) -> dict:
    rows = data(
        desk.get("/secure/crypto/withdrawals", headers=actor.headers, params={"platformId": USER})
    )["withdrawals"]
    return next(row for row in rows if row["id"] == withdrawal_id)


def refunds(withdrawal_id: str) -> tuple[int, int]:
    """(REFUND wallet transfers, REFUND fundings) of the cashout."""
    return (
        Transfer.objects.filter(kind="REFUND", cause_id=withdrawal_id).count(),
        Funding.objects.filter(type="REFUND", source_id=withdrawal_id).count(),
    )


@pytest.mark.django_db(transaction=True)
def test_parallel_cashouts_take_distinct_nonces_and_are_all_mined(chain: Chain, settings):
    shop = make_actor(name="Racer")
    wallet_admin_credit(merchant=shop.merchant, amount=Decimal("1000.00"), reason="test")
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"ETH"})  # approved, not broadcast yet
    api = APIClient()
    ids = []
    for n in range(8):
        body = cashout_body(platformId=USER, requestId=f"parallel-{n:04d}", amountCents=2500)
        answer = api.post(
            "/secure/crypto/withdraw", body, format="json", headers={"api-key": shop.api_key}
        )
        assert answer.status_code == 200, answer.content
        assert answer.json()["data"]["status"] == "approved"
        ids.append(answer.json()["data"]["id"])
    settings.CRYPTO_PAUSED_CHAINS = frozenset()

    # Sixteen workers at once: each cashout broadcast by two of them (a redelivered task).
    start = threading.Barrier(16)

    def worker(withdrawal_id: str) -> Callable[[], None]:
        def work() -> None:
            try:
                start.wait()
                crypto_withdrawal_broadcast(withdrawal_id=withdrawal_id)
            finally:
                connection.close()

        return work

    with ThreadPoolExecutor(max_workers=16) as pool:
        for done in [pool.submit(worker(i)) for i in ids + ids]:
            done.result()

    sent = EvmTransaction.objects.filter(purpose="cashout")
    assert sorted(sent.values_list("nonce", flat=True)) == list(range(8))
    assert EvmAttempt.objects.count() == 8
    assert EvmSender.objects.get(address=hot_wallet("ETH")).next_nonce == 8
    for withdrawal in CryptoWithdrawal.objects.filter(pk__in=ids):
        assert withdrawal.status == "sent"
        assert chain.mined(withdrawal.tx_hash)["status"] == 1
    assert chain.balance_of(chain.usdc, RECIPIENT) == Decimal("160.00")  # 8 x (25.00 - 5.00)

    chain.mine(CONFIRMATIONS)
    sweep_withdrawals()
    assert set(CryptoWithdrawal.objects.values_list("status", flat=True)) == {"completed"}
    balances = wallet_balances(merchant=shop.merchant)
    assert (balances["available"], balances["locked"]) == (Decimal("800.00"), Decimal("0.00"))
    assert wallet_invariants_check().clean


@pytest.mark.django_db
def test_a_cashout_is_sent_and_completes_at_its_confirmations(desk, alice, hooks, chain: Chain):
    made = cashout(desk, alice, amountCents=3000)
    assert made["status"] == "sent"
    receipt = chain.mined(made["txHash"])
    assert receipt["status"] == 1
    assert receipt["type"] == 2  # EIP-1559
    assert chain.balance_of(chain.usdc, RECIPIENT) == Decimal("25.00")
    assert money(alice)["locked"] == Decimal("30.00")

    chain.mine(CONFIRMATIONS - 2)
    desk.run(sweep_withdrawals)
    assert shown(desk, alice, made["id"])["status"] == "sent"
    chain.mine(1)
    desk.run(sweep_withdrawals)
    done = shown(desk, alice, made["id"])
    assert (done["status"], done["txHash"]) == ("completed", made["txHash"])
    assert money(alice)["available"] == Decimal("970.00")
    assert money(alice)["locked"] == Decimal("0.00")
    assert [r.json["type"] for r in hooks.of_type("crypto_withdrawal.completed")] == [
        "crypto_withdrawal.completed"
    ]
    assert clean()


@pytest.mark.django_db
def test_a_reverted_cashout_is_refunded_exactly_once(
    desk, alice, hooks, chain: Chain, clock_advance
):
    chain.automine(False)
    made = cashout(desk, alice)
    assert made["status"] == "sent"
    assert made["txHash"] in chain.pool()
    # Before the next block the issuer blocks the recipient, paying more to be first in it.
    chain.block(chain.usdc, RECIPIENT, tip_gwei=50)
    chain.mine(1)
    assert int(chain.receipt(made["txHash"])["status"], 16) == 0

    desk.run(sweep_withdrawals)
    assert shown(desk, alice, made["id"])["status"] == "sent"  # a revert is final at 12 too
    assert money(alice)["locked"] == Decimal("25.00")
    chain.mine(CONFIRMATIONS - 1)
    desk.run(sweep_withdrawals)
    failed = shown(desk, alice, made["id"])
    assert (failed["status"], failed["reason"]) == ("failed", "TX_REVERTED")
    assert money(alice)["available"] == Decimal("1000.00")

    for _ in range(3):  # later sweeps, of both kinds, refund nothing more
        clock_advance(16)
        desk.run(sweep_withdrawals)
        desk.run(evm_sweep_transactions)
    assert refunds(made["id"]) == (1, 1)
    assert money(alice)["locked"] == Decimal("0.00")
    assert chain.balance_of(chain.usdc, RECIPIENT) == Decimal("0")
    signed = EvmTransaction.objects.get(purpose="cashout")
    assert (signed.status, signed.succeeded) == ("confirmed", False)
    assert len(hooks.of_type("crypto_withdrawal.failed")) == 1
    assert clean()


@pytest.mark.django_db
def test_a_cashout_the_token_would_revert_is_never_signed_and_is_refunded(
    desk, alice, chain: Chain, clock_advance
):
    chain.block(chain.usdc, RECIPIENT)
    made = cashout(desk, alice)
    assert made["status"] == "approved"
    for wait in django_settings.CRYPTO_BROADCAST_RETRY_SECONDS:
        clock_advance(wait + 1)
        desk.run(sweep_withdrawals)
    failed = shown(desk, alice, made["id"])
    assert (failed["status"], failed["reason"], failed["txHash"]) == (
        "failed",
        "BROADCAST_FAILED",
        None,
    )
    assert refunds(made["id"]) == (1, 1)
    assert money(alice)["available"] == Decimal("1000.00")
    assert not EvmTransaction.objects.exists()
    assert chain.w3.eth.get_transaction_count(hot_wallet("ETH")) == 0  # no nonce was spent
    assert clean()


@pytest.mark.django_db
def test_a_stuck_cashout_is_replaced_at_higher_fees_with_the_same_nonce(
    desk, alice, chain: Chain, clock_advance, time_passes
):
    chain.automine(False)  # no block comes: the transaction waits in the pool
    made = cashout(desk, alice)
    first = EvmAttempt.objects.get(tx_hash=made["txHash"])
    time_passes(16)
    desk.run(evm_sweep_transactions)
    assert EvmAttempt.objects.count() == 1  # looked at, sent again, not yet replaced
    # The chain's blocks come in real time: the sandbox clock (any merchant's advance) spends
    # no gas on a replacement.
    clock_advance(10 * django_settings.CRYPTO_EVM_FEE_BUMP_SECONDS)
    desk.run(evm_sweep_transactions)
    assert EvmAttempt.objects.count() == 1

    time_passes(django_settings.CRYPTO_EVM_FEE_BUMP_SECONDS)
    desk.run(evm_sweep_transactions)
    second = EvmAttempt.objects.exclude(pk=first.pk).get()
    assert second.evm_transaction_id == first.evm_transaction_id  # the same nonce
    assert second.max_priority_fee_per_gas >= first.max_priority_fee_per_gas * Decimal("1.125")
    assert second.max_fee_per_gas >= first.max_fee_per_gas * Decimal("1.125")
    assert chain.pool() == [second.tx_hash]  # the node replaced the first
    assert not chain.knows(first.tx_hash)

    chain.mine(1)
    desk.run(sweep_withdrawals)
    moved = shown(desk, alice, made["id"])
    assert (moved["status"], moved["txHash"]) == ("sent", second.tx_hash)
    chain.mine(CONFIRMATIONS - 1)
    desk.run(sweep_withdrawals)
    done = shown(desk, alice, made["id"])
    assert (done["status"], done["txHash"]) == ("completed", second.tx_hash)
    assert Funding.objects.get(type="WITHDRAWAL", source_id=made["id"]).txn_hash == second.tx_hash
    assert chain.balance_of(chain.usdc, RECIPIENT) == Decimal("20.00")  # paid once
    assert clean()
