"""Sweeps on a real EVM node: credited tokens moved from deposit addresses to the hot wallet, on
the schedule and on a staff request from the admin, the gas topped up from the hot wallet when an
address has none, every sweep recorded; no USD moves."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from core.models import StaffAction
from crypto.evm.models import EvmSweep, EvmTransaction
from crypto.keys import hot_wallet
from crypto.models import AddressAllocation
from crypto.tasks import evm_plan_sweeps, evm_scan, evm_sweep_addresses, sweep_deposits
from tests.crypto.conftest import OTHER_USER, clean, deposit_address, money
from tests.crypto.evm.chain import Chain
from tests.crypto.evm.conftest import HOT_WALLET_TOKENS
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

CONFIRMATIONS = 12
STEP_SECONDS = 16


def credited(desk, chain: Chain, token, address: str, amount: str) -> None:
    payer = chain.funded_account()
    chain.mint(token, payer.address, amount)
    chain.pay(token, payer, address, amount)
    chain.mine(CONFIRMATIONS)
    desk.run(evm_scan)
    desk.run(sweep_deposits)


def step(desk, chain: Chain, clock_advance) -> None:
    """The sweeps' beat entry once its deadline came, after the node mined what was sent."""
    chain.settle()
    clock_advance(STEP_SECONDS)
    desk.run(evm_sweep_addresses)


def test_the_schedule_sweeps_credited_tokens_to_the_hot_wallet_topping_up_the_gas(
    desk, alice, chain: Chain, clock_advance
):
    address = deposit_address(desk, alice, "ETH")["address"]
    small = deposit_address(desk, alice, "ETH", user=OTHER_USER)["address"]
    credited(desk, chain, chain.usdc, address, "120")
    credited(desk, chain, chain.usdc, small, "30")  # below CRYPTO_EVM_SWEEP_MIN_TOKENS (50)
    chain.set_balance(address, 0)  # no ether to pay the transfer's gas
    wallet_before = Transfer.objects.count()

    assert desk.run(evm_plan_sweeps) == 1
    sweep = EvmSweep.objects.get()
    assert (sweep.status, sweep.trigger, sweep.token, sweep.address) == (
        "funding",
        "schedule",
        "USDC",
        address,
    )
    assert sweep.amount == Decimal("120")
    assert sweep.gas_topup == sweep.gas_needed > 0
    gas = EvmTransaction.objects.get(purpose="gas")
    assert (gas.sender, gas.to, gas.value) == (hot_wallet("ETH"), address, sweep.gas_topup)

    step(desk, chain, clock_advance)  # the top-up is in a block: the address sends the tokens
    sweep.refresh_from_db()
    assert sweep.status == "sweeping"
    assert sweep.sweep_transaction.sender == address
    chain.settle()
    assert chain.balance_of(chain.usdc, address) == 0
    assert chain.balance_of(chain.usdc, hot_wallet("ETH")) == Decimal(HOT_WALLET_TOKENS) + 120

    step(desk, chain, clock_advance)
    assert EvmSweep.objects.get().status == "sweeping"  # final at 12 confirmations
    chain.mine(CONFIRMATIONS)
    step(desk, chain, clock_advance)
    sweep.refresh_from_db()
    assert sweep.status == "completed"
    assert sweep.tx_hash == sweep.sweep_transaction.mined_hash
    assert sweep.completed_at is not None

    assert desk.run(evm_plan_sweeps) == 0  # swept since its credit; the small one waits
    assert EvmSweep.objects.count() == 1
    assert chain.balance_of(chain.usdc, small) == Decimal("30")
    assert Transfer.objects.count() == wallet_before  # tokens moved, no USD
    assert money(alice)["available"] == Decimal("1150.00")
    assert clean()


def test_staff_sweep_every_token_of_an_address_from_the_admin(
    desk, alice, chain: Chain, clock_advance
):
    address = deposit_address(desk, alice, "ETH")["address"]
    credited(desk, chain, chain.usdc, address, "7")
    credited(desk, chain, chain.usdt, address, "3.5")
    chain.set_balance(address, 10**18)  # gas enough: no top-up
    allocation = AddressAllocation.objects.get(evm_address=address)
    staff = User.objects.create_superuser("staff", "staff@example.com", "x")
    desk.api.force_login(staff)

    answer = desk.run(
        lambda: desk.api.post(
            "/admin/crypto/addressallocation/",
            {
                "action": "sweep",
                "_selected_action": [allocation.pk],
                "staff_confirm": "yes",
                "reason": "the merchant closes this user's account",
            },
        )
    )
    assert answer.status_code == 302
    sweeps = EvmSweep.objects.order_by("token")
    assert [(s.token, s.amount, s.status, s.trigger) for s in sweeps] == [
        ("USDC", Decimal("7"), "sweeping", "staff"),
        ("USDT", Decimal("3.5"), "sweeping", "staff"),
    ]
    assert not EvmTransaction.objects.filter(purpose="gas").exists()
    entry = LogEntry.objects.get(object_id=str(allocation.pk))
    assert entry.get_change_message() == (
        "Sweep to the hot wallet: Sweeps requested: EVM (ETH). "
        "Reason: the merchant closes this user's account"
    )
    action = StaffAction.objects.get()
    assert (action.user, action.action, action.subject_id) == (
        "staff",
        "sweep_address",
        str(allocation.pk),
    )

    chain.settle()
    chain.mine(CONFIRMATIONS)
    step(desk, chain, clock_advance)
    assert set(EvmSweep.objects.values_list("status", flat=True)) == {"completed"}
    assert chain.balance_of(chain.usdc, address) == chain.balance_of(chain.usdt, address) == 0
    nonces = sorted(EvmTransaction.objects.filter(sender=address).values_list("nonce", flat=True))
    assert nonces == [0, 1]  # the address's two transfers, one nonce each

    pages = ["/admin/crypto/evmsweep/", "/admin/crypto/evmtransaction/"]
    for page in pages:
        assert address in desk.api.get(page).content.decode()
    assert clean()


def test_a_sweep_whose_top_up_fees_outran_is_planned_again_with_more_gas(
    desk, alice, chain: Chain, clock_advance
):
    address = deposit_address(desk, alice, "ETH")["address"]
    credited(desk, chain, chain.usdc, address, "80")
    chain.set_balance(address, 0)
    assert desk.run(evm_plan_sweeps) == 1
    first = EvmSweep.objects.get()
    chain.settle()
    # The base fee jumps tenfold before the address signs: its top-up no longer pays the gas.
    base = int(chain.w3.eth.get_block("latest")["baseFeePerGas"])
    chain.rpc("anvil_setNextBlockBaseFeePerGas", hex(base * 10))
    chain.mine(1)

    step(desk, chain, clock_advance)
    first.refresh_from_db()
    assert (first.status, first.reason) == ("failed", "fees rose past the gas top-up")
    assert first.sweep_transaction is None  # the address signed nothing

    assert desk.run(evm_plan_sweeps) == 1  # a failed sweep does not count as swept
    second = EvmSweep.objects.exclude(pk=first.pk).get()
    assert second.status == "funding"
    assert 0 < second.gas_topup < second.gas_needed  # what the first top-up left counts
    step(desk, chain, clock_advance)
    chain.settle()
    chain.mine(CONFIRMATIONS)
    step(desk, chain, clock_advance)
    second.refresh_from_db()
    assert second.status == "completed"
    assert chain.balance_of(chain.usdc, address) == 0
    assert clean()
