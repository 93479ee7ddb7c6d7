"""Deposits on a real EVM node: ERC-20 transfers to users' addresses found by the scanner,
credited once they have the chain's confirmations (12 on ETH), failed when a reorganisation takes
them away first (as the sandbox's reorg fails them), and never credited twice or skipped when
the scanner stops in the middle of a range."""

from decimal import Decimal

import pytest

from crypto import tasks
from crypto.evm.models import EvmBlock, EvmCursor, EvmTransferLog
from crypto.models import CryptoDeposit
from crypto.tasks import evm_scan, sweep_deposits
from ledger.models import Funding
from tests.crypto.conftest import (
    OTHER_USER,
    USER,
    clean,
    data,
    deposit_address,
    money,
    send,
)
from tests.crypto.evm.chain import Chain
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

CONFIRMATIONS = 12  # ETH


def deposits(desk, actor, user: str = USER) -> list[dict]:
    response = desk.get(
        "/secure/crypto/deposits", headers=actor.headers, params={"platformId": user}
    )
    return data(response)["deposits"]


def funding_of(deposit_id: str) -> Funding:
    return Funding.objects.get(source_type="crypto_deposit", source_id=deposit_id)


def observe(desk) -> None:
    """What beat does: the scanner, then the confirmations sweep (their webhooks delivered)."""
    desk.run(evm_scan)
    desk.run(sweep_deposits)


def test_a_deposit_is_credited_at_its_twelfth_confirmation_not_before(
    desk, alice, bob, hooks, chain: Chain
):
    address = deposit_address(desk, alice, "ETH")["address"]
    bobs = deposit_address(desk, bob, "ETH")["address"]
    payer = chain.funded_account()
    chain.mint(chain.usdc, payer.address, "100")
    tx_hash = chain.pay(chain.usdc, payer, address, "25.50")

    observe(desk)
    [pending] = deposits(desk, alice)
    assert pending | {"createdAt": None, "updatedAt": None} == {
        "id": pending["id"],
        "type": "crypto_deposit",
        "status": "pending",
        "platformId": USER,
        "chain": "ETH",
        "token": "USDC",
        "amount": "25.50",
        "amountCents": 2550,
        "cryptoAmount": "25.5",
        "address": address,
        "txHash": tx_hash,
        "from": payer.address,
        "createdAt": None,
        "updatedAt": None,
        "completedAt": None,
    }
    assert funding_of(pending["id"]).status == Funding.Status.PENDING
    assert deposits(desk, bob) == []  # bob's user has an address, not this deposit

    chain.mine(CONFIRMATIONS - 2)  # 11 confirmations
    observe(desk)
    assert CryptoDeposit.objects.get(pk=pending["id"]).confirmations == CONFIRMATIONS - 1
    assert deposits(desk, alice)[0]["status"] == "pending"
    assert money(alice)["available"] == Decimal("1000.00")

    chain.mine(1)
    observe(desk)
    [done] = deposits(desk, alice)
    assert done["status"] == "completed"
    assert money(alice)["available"] == Decimal("1025.50")
    assert funding_of(done["id"]).status == Funding.Status.COMPLETED
    assert Transfer.objects.filter(cause_type="crypto_deposit", cause_id=done["id"]).count() == 1

    chain.mine(5)
    observe(desk)  # later scans and sweeps change nothing
    assert money(alice)["available"] == Decimal("1025.50")
    assert [r.json["type"] for r in hooks.received] == [
        "crypto_deposit.pending",
        "crypto_deposit.completed",
    ]
    assert money(bob)["available"] == Decimal("1000.00")
    assert bobs != address
    assert clean()


def test_a_reorganisation_before_the_confirmations_fails_the_deposit_as_the_sandbox_does(
    desk, alice, bob, hooks, bob_hooks, chain: Chain
):
    # Bob's BSC is the sandbox's (no node configured for it): its reorg helper is the reference.
    bobs = deposit_address(desk, bob, "BSC")["address"]
    sandboxed = data(send(desk, bob, "BSC", bobs, "40", token="USDT"))
    reference = data(
        desk.post(f"/sandbox/crypto/transfers/{sandboxed['txHash']}/reorg", headers=bob.headers)
    )["deposit"]

    address = deposit_address(desk, alice, "ETH")["address"]
    payer = chain.funded_account()
    chain.mint(chain.usdc, payer.address, "100")
    fork = chain.snapshot()
    chain.pay(chain.usdc, payer, address, "40")
    chain.mine(3)
    observe(desk)
    [pending] = deposits(desk, alice)
    assert pending["status"] == "pending"
    assert CryptoDeposit.objects.get(pk=pending["id"]).confirmations == 4

    # Another branch wins: the blocks since the fork are replaced by longer ones in which the
    # payer spent the same nonce on a smaller payment.
    chain.revert(fork)
    replacement = chain.pay(chain.usdc, payer, address, "30")
    chain.mine(6)
    observe(desk)
    failed = next(d for d in deposits(desk, alice) if d["id"] == pending["id"])

    assert failed["status"] == reference["status"] == "failed"
    assert funding_of(failed["id"]).status == funding_of(reference["id"]).status == "FAILED"
    assert (
        [r.json["type"] for r in hooks.received if r.json["deposit"]["id"] == failed["id"]]
        == [r.json["type"] for r in bob_hooks.received]
        == ["crypto_deposit.pending", "crypto_deposit.failed"]
    )
    assert not Transfer.objects.filter(cause_type="crypto_deposit").exists()
    assert money(alice)["available"] == money(bob)["available"] == Decimal("1000.00")

    # The scanner read the replaced blocks again: the payment of the winning branch counts.
    chain.mine(CONFIRMATIONS)
    observe(desk)
    by_tx = {d["txHash"]: d for d in deposits(desk, alice)}
    assert by_tx[failed["txHash"]]["status"] == "failed"
    assert by_tx[replacement]["status"] == "completed"
    assert money(alice)["available"] == Decimal("1030.00")
    assert clean()


def test_a_scan_stopped_in_the_middle_starts_again_where_it_was_and_credits_each_transfer_once(
    desk, alice, bob, settings, monkeypatch, chain: Chain
):
    settings.CRYPTO_EVM_SCAN_BLOCKS = 2
    first = deposit_address(desk, alice, "ETH")["address"]
    second = deposit_address(desk, alice, "ETH", user=OTHER_USER)["address"]
    bobs = deposit_address(desk, bob, "ETH")["address"]
    payer = chain.funded_account()
    chain.mint(chain.usdc, payer.address, "500")
    chain.mint(chain.usdt, payer.address, "500")
    start = EvmCursor.objects.get(chain="ETH").next_block
    sent = [
        chain.pay(chain.usdc, payer, first, "11"),
        chain.pay(chain.usdt, payer, bobs, "12"),
        # One transaction paying two addresses: two transfers, two deposits.
        chain.send(
            payer,
            chain.usdc.functions.batchTransfer(
                [second, first], [chain.units("13"), chain.units("14")]
            ),
        ),
        chain.pay(chain.usdt, payer, second, "15"),
    ]
    chain.mine(2)
    observed = []
    real_observe = tasks.crypto_deposit_observe

    def dies_at_the_third(**transfer):
        if len(observed) == 2:
            raise SystemExit("worker killed")
        observed.append(transfer["tx_hash"])
        return real_observe(**transfer)

    monkeypatch.setattr(tasks, "crypto_deposit_observe", dies_at_the_third)
    with pytest.raises(SystemExit):
        desk.run(evm_scan)
    assert CryptoDeposit.objects.count() == 2
    # The range with the third transfer was not passed: the cursor stops before it.
    cursor = EvmCursor.objects.get(chain="ETH").next_block
    third_block = int(chain.receipt(sent[2])["blockNumber"], 16)
    assert start < cursor <= third_block

    monkeypatch.setattr(tasks, "crypto_deposit_observe", real_observe)  # the worker restarts
    desk.run(evm_scan)
    desk.run(evm_scan)
    assert EvmCursor.objects.get(chain="ETH").next_block == chain.head() + 1
    rows = CryptoDeposit.objects.order_by("tx_hash", "event_index")
    assert sorted((d.tx_hash, d.amount_usd) for d in rows) == sorted(
        [
            (sent[0], Decimal("11.00")),
            (sent[1], Decimal("12.00")),
            (sent[2], Decimal("13.00")),
            (sent[2], Decimal("14.00")),
            (sent[3], Decimal("15.00")),
        ]
    )
    assert EvmTransferLog.objects.count() == 5
    assert EvmBlock.objects.filter(chain="ETH").exists()

    chain.mine(CONFIRMATIONS)
    observe(desk)
    observe(desk)
    assert money(alice)["available"] == Decimal("1053.00")  # 11 + 13 + 14 + 15
    assert money(bob)["available"] == Decimal("1012.00")
    assert Transfer.objects.filter(kind="CRYPTO_DEPOSIT").count() == 5
    assert clean()
