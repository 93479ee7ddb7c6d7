"""The EVM gateway's edges: a node that stops answering stops nothing for good and sends nothing
it cannot account for; Solana, which the EVM gateway alone does not serve, answers
ONCHAIN_DISABLED outside the sandbox; the configured token contracts are the ones the service
credits and pays."""

from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings.chains import _token_contracts
from crypto.chains import get_chains
from crypto.chains.base import ChainError
from crypto.chains.evm import EvmChains
from crypto.chains.unconfigured import UnconfiguredChains
from crypto.evm.models import EvmTransaction
from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.networks import network
from crypto.tasks import evm_scan, evm_sweep_transactions, sweep_deposits, sweep_withdrawals
from tests.crypto.conftest import SOL_RECIPIENT, USER, cashout_body, clean, data, deposit_address
from tests.crypto.evm.chain import Chain
from tests.factories import assert_error

pytestmark = pytest.mark.django_db


def test_the_configured_tokens_are_the_ones_credited_and_paid(chain: Chain):
    eth = network("ETH")
    assert eth.token("USDC").contract == chain.usdc.address
    assert eth.token("USDT").contract == chain.usdt.address
    assert network("BSC").token("USDT").contract == "0x337610d27c682E347C9cD60BD4b3b107C9d34dDd"
    gateway = get_chains()
    assert isinstance(gateway, EvmChains)
    assert gateway.chains == ("ETH",)


def test_a_node_that_does_not_answer_leaves_everything_to_the_next_sweep(
    desk, alice, chain: Chain, clock_advance
):
    address = deposit_address(desk, alice, "ETH")["address"]
    payer = chain.funded_account()
    chain.mint(chain.usdc, payer.address, "50")
    chain.pay(chain.usdc, payer, address, "50")
    desk.run(evm_scan)
    assert CryptoDeposit.objects.get().status == "pending"

    chain.anvil.stop()
    made = data(
        desk.post("/secure/crypto/withdraw", cashout_body(platformId=USER), headers=alice.headers)
    )
    clock_advance(16)
    for sweep in (evm_scan, sweep_deposits, sweep_withdrawals, evm_sweep_transactions):
        desk.run(sweep)  # each logs the outage and returns

    assert CryptoDeposit.objects.get().status == "pending"
    withdrawal = CryptoWithdrawal.objects.get(pk=made["id"])
    # Refused before anything was signed: retried later, as any refused broadcast.
    assert (withdrawal.status, withdrawal.broadcast_attempts) == ("approved", 1)
    assert "eth_estimateGas" in withdrawal.reason_detail
    assert not EvmTransaction.objects.exists()
    assert clean()


def test_outside_the_sandbox_solana_without_its_gateway_answers_onchain_disabled(
    desk, alice, chain: Chain, settings
):
    settings.SANDBOX = False
    settings.CRYPTO_OTHER_CHAINS = ""
    get_chains.cache_clear()
    gateway = get_chains()
    assert isinstance(gateway, EvmChains)
    assert isinstance(gateway.other, UnconfiguredChains)

    refused = desk.get(
        "/secure/crypto/deposit-address",
        headers=alice.headers,
        params={"chain": "SOL", "platformId": USER},
    )
    assert_error(refused, 503, 2500, "ONCHAIN_DISABLED")
    assert deposit_address(desk, alice, "ETH")["status"] == "active"
    with pytest.raises(ChainError):
        gateway.broadcast(
            tenant=str(alice.merchant.pk),
            chain="SOL",
            contract=network("SOL").token("USDC").contract,
            to=SOL_RECIPIENT,
            amount=Decimal("10"),
            key="never-sent",
        )
    with pytest.raises(ChainError):
        gateway.transfer_state(chain="SOL", tx_hash="anything")


def test_token_contracts_come_from_the_environment_checked(monkeypatch):
    usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
    monkeypatch.setenv("CRYPTO_ETH_TOKENS", f" USDC={usdc}:6 ,")
    assert _token_contracts("ETH") == {"USDC": (usdc, 6)}
    for wrong in (f"DAI={usdc}:18", f"USDC={usdc}", "USDC=0x12:6"):
        monkeypatch.setenv("CRYPTO_ETH_TOKENS", wrong)
        with pytest.raises(ImproperlyConfigured):
            _token_contracts("ETH")
