"""The sandbox chain switches belong to the merchant that set them (decisions section 8): bob's
halted chain or refusing node never holds alice's addresses, credits or cashouts. The operator's
CRYPTO_PAUSED_CHAINS still pauses the chain for everyone."""

from decimal import Decimal

import pytest

from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.tasks import sweep_deposits, sweep_withdrawals
from sandbox.tasks import crypto_sandbox_autopilot
from tests.crypto.conftest import (
    USER,
    cashout_body,
    clean,
    confirm,
    data,
    deposit_address,
    money,
    send,
)

pytestmark = pytest.mark.django_db


def switch(desk, actor, chain: str, **body: bool) -> dict:
    result: dict = data(desk.post(f"/sandbox/crypto/chains/{chain}", body, headers=actor.headers))
    return result


def cashout(desk, actor, chain: str = "ETH"):
    body = cashout_body(platformId=USER, chain=chain)
    return data(desk.post("/secure/crypto/withdraw", body, headers=actor.headers))


def status_of(withdrawal: dict) -> str:
    return CryptoWithdrawal.objects.get(pk=withdrawal["id"]).status


def sent_hash(withdrawal: dict) -> str:
    return CryptoWithdrawal.objects.get(pk=withdrawal["id"]).tx_hash


def test_a_chain_halted_by_another_merchant_keeps_running_here(desk, alice, bob):
    alices_address = deposit_address(desk, alice, "ETH")["address"]
    bobs_address = deposit_address(desk, bob, "ETH")["address"]

    assert switch(desk, bob, "ETH", paused=True) == {
        "chain": "ETH",
        "paused": True,
        "failBroadcasts": False,
    }

    assert deposit_address(desk, alice, "ETH")["status"] == "active"
    assert deposit_address(desk, bob, "ETH")["status"] == "paused"
    alices = data(send(desk, alice, "ETH", alices_address, "40", confirmations=12))
    bobs = data(send(desk, bob, "ETH", bobs_address, "30", confirmations=12))
    assert alices["deposit"]["status"] == "completed"
    assert bobs["deposit"]["status"] == "pending"
    desk.run(sweep_deposits.delay)
    assert CryptoDeposit.objects.get(tx_hash=bobs["txHash"]).status == "pending"
    assert (money(alice)["available"], money(bob)["available"]) == (
        Decimal("1040.00"),
        Decimal("1000.00"),
    )

    sent = cashout(desk, alice)
    held = cashout(desk, bob)
    assert (status_of(sent), status_of(held)) == ("sent", "approved")
    assert data(confirm(desk, alice, sent_hash(sent), 12))["withdrawal"]["status"] == "completed"
    assert clean()


def test_a_chain_halted_here_resumes_for_this_merchant_alone(desk, alice, bob):
    switch(desk, alice, "BSC", paused=True)
    switch(desk, bob, "BSC", paused=True)
    bobs_address = deposit_address(desk, bob, "BSC")["address"]
    bobs = data(send(desk, bob, "BSC", bobs_address, "30", confirmations=15))
    alices_cashout = cashout(desk, alice, "BSC")

    switch(desk, bob, "BSC", paused=False)
    desk.run(sweep_deposits.delay)
    desk.run(sweep_withdrawals.delay)

    assert CryptoDeposit.objects.get(tx_hash=bobs["txHash"]).status == "completed"
    assert status_of(alices_cashout) == "approved"
    assert deposit_address(desk, alice, "BSC")["status"] == "paused"


def test_a_node_refusing_another_merchants_broadcasts_sends_ours(desk, alice, bob):
    switch(desk, bob, "ETH", failBroadcasts=True)

    sent = cashout(desk, alice)
    refused = cashout(desk, bob)

    assert status_of(sent) == "sent"
    refused_row = CryptoWithdrawal.objects.get(pk=refused["id"])
    assert (refused_row.status, refused_row.broadcast_attempts) == ("approved", 1)


def test_the_autopilot_holds_only_the_halting_merchants_transfers(
    desk, alice, bob, settings, clock_advance
):
    settings.SANDBOX_AUTOPILOT_SECONDS = 5
    alices = data(send(desk, alice, "ETH", deposit_address(desk, alice, "ETH")["address"], "12"))
    bobs = data(send(desk, bob, "ETH", deposit_address(desk, bob, "ETH")["address"], "12"))
    switch(desk, bob, "ETH", paused=True)

    clock_advance(6)
    assert desk.run(crypto_sandbox_autopilot.delay).get() == 1

    assert CryptoDeposit.objects.get(tx_hash=alices["txHash"]).status == "completed"
    assert CryptoDeposit.objects.get(tx_hash=bobs["txHash"]).confirmations == 0


def test_the_operators_paused_chains_stay_paused_for_everyone(desk, alice, bob, settings):
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"ETH"})
    switch(desk, bob, "ETH", paused=False)  # a merchant's switch does not resume it

    assert deposit_address(desk, alice, "ETH")["status"] == "paused"
    assert deposit_address(desk, bob, "ETH")["status"] == "paused"
    assert deposit_address(desk, bob, "BSC")["status"] == "active"
