"""The Solana gateway's edges: one CRYPTO_CHAINS serving Solana beside the EVM chains, what
`manage.py check` says while nothing serves Solana, a node that throttles (HTTP 429) or falls
behind stops nothing for good, cashouts to token accounts, and the hot wallet and mints taken
from the environment, checked."""

import json
from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured
from solders.keypair import Keypair

from config.settings.chains import _solana_mints
from crypto.chains import chain_gateway, get_chains
from crypto.chains.evm import EvmChains, evm_served_chains
from crypto.chains.nodes import NodeChains
from crypto.chains.solana import SolanaChains, solana_served
from crypto.chains.unconfigured import UnconfiguredChains
from crypto.checks import outside_systems_check
from crypto.keys import hot_wallet, solana_hot_wallet_keypair, solana_owner
from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.tasks import solana_scan, sweep_withdrawals
from tests.crypto.conftest import USER, cashout_body, clean, data, deposit_address, money
from tests.crypto.solana.conftest import open_address
from tests.crypto.solana.rpc import SolanaRpc
from tests.factories import assert_error

pytestmark = pytest.mark.django_db


def test_node_chains_serve_solana_beside_the_evm_chains(desk, alice, settings, solana: SolanaRpc):
    settings.CRYPTO_CHAINS = "crypto.chains.nodes.NodeChains"  # no EVM node configured
    get_chains.cache_clear()
    gateway = get_chains()
    assert isinstance(gateway, NodeChains)
    assert isinstance(gateway.other, EvmChains)
    assert chain_gateway("SOL") is gateway
    assert type(chain_gateway("ETH")).__name__ == "SandboxChains"  # SANDBOX: the other chains
    assert solana_served()
    assert evm_served_chains() == ()

    assert open_address(desk, alice)["status"] == "active"
    assert deposit_address(desk, alice, "ETH")["status"] == "active"


def test_outside_the_sandbox_an_unserved_chain_answers_onchain_disabled(
    desk, alice, settings, solana: SolanaRpc
):
    settings.CRYPTO_OTHER_CHAINS = ""
    get_chains.cache_clear()
    assert isinstance(chain_gateway("ETH"), UnconfiguredChains)
    assert open_address(desk, alice)["status"] == "active"
    refused = desk.get(
        "/secure/crypto/deposit-address",
        headers=alice.headers,
        params={"chain": "ETH", "platformId": USER},
    )
    assert_error(refused, 503, 2500, "ONCHAIN_DISABLED")


def test_check_says_while_nothing_serves_solana(settings):
    settings.CRYPTO_CHAINS = "crypto.chains.evm.EvmChains"
    settings.CRYPTO_OTHER_CHAINS = ""
    settings.CRYPTO_RPC_URLS = {}
    assert [m.id for m in outside_systems_check()] == ["crypto.W002"]

    settings.CRYPTO_CHAINS = "crypto.chains.solana.SolanaChains"
    assert [m.id for m in outside_systems_check()] == ["crypto.W002"]  # no node for it

    settings.CRYPTO_RPC_URLS = {"SOL": "http://127.0.0.1:9"}
    assert outside_systems_check() == []
    settings.CRYPTO_CHAINS = "crypto.chains.nodes.NodeChains"
    assert outside_systems_check() == []

    settings.CRYPTO_RPC_URLS = {}
    settings.CRYPTO_OTHER_CHAINS = "sandbox.chains.SandboxChains"
    assert outside_systems_check() == []  # the sandbox serves it

    settings.CRYPTO_OTHER_CHAINS = "no.such.Gateway"
    assert [m.id for m in outside_systems_check()] == ["crypto.E002"]
    settings.CRYPTO_CHAINS = ""
    assert [m.id for m in outside_systems_check()] == ["crypto.W001"]


def test_a_node_that_throttles_or_falls_behind_leaves_the_deposit_to_the_next_scan(
    desk, alice, solana: SolanaRpc
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    payer = ledger.wallet()
    ledger.mint(str(payer.pubkey()), "USDC", "30")
    ledger.pay(payer, address["address"], "USDC", "30")

    solana.behind = 42  # getHealth: -32005 Node is behind by 42 slots
    assert desk.run(solana_scan) == 0
    assert solana.count("getSignaturesForAddress") == 0
    solana.behind = 0
    solana.throttle = 1  # HTTP 429 on the next request
    assert desk.run(solana_scan) == 0
    assert not CryptoDeposit.objects.exists()

    assert desk.run(solana_scan) == 1
    assert CryptoDeposit.objects.get().status == "completed"
    assert money(alice)["available"] == Decimal("1030.00")
    assert clean()


def test_a_throttled_broadcast_is_retried_and_sent_once(
    desk, alice, solana: SolanaRpc, clock_advance
):
    recipient = str(Keypair().pubkey())
    solana.throttle = 1
    body = cashout_body(platformId=USER, chain="SOL", address=recipient)
    made = data(desk.post("/secure/crypto/withdraw", body, headers=alice.headers))
    withdrawal = CryptoWithdrawal.objects.get(pk=made["id"])
    assert (withdrawal.status, withdrawal.broadcast_attempts) == ("approved", 1)
    assert "429" in withdrawal.reason_detail

    clock_advance(31)
    desk.run(sweep_withdrawals)
    withdrawal.refresh_from_db()
    assert withdrawal.status in ("sent", "completed")
    desk.run(sweep_withdrawals)
    withdrawal.refresh_from_db()
    assert withdrawal.status == "completed"
    assert solana.ledger.token_balance(recipient, "USDC") == Decimal("24.50")
    assert clean()


def test_a_cashout_to_a_token_account_pays_it_and_one_of_another_mint_is_refused(
    desk, alice, solana: SolanaRpc
):
    ledger = solana.ledger
    wallet = str(Keypair().pubkey())
    ledger.mint(wallet, "USDC", "1")
    ledger.mint(wallet, "USDT", "1")
    usdc_account = ledger.ata(wallet, "USDC")
    body = cashout_body(platformId=USER, chain="SOL", address=usdc_account)
    made = data(desk.post("/secure/crypto/withdraw", body, headers=alice.headers))
    assert CryptoWithdrawal.objects.get(pk=made["id"]).status == "sent"
    assert ledger.token_balance(wallet, "USDC") == Decimal("25.50")  # into that very account

    usdt_account = ledger.ata(wallet, "USDT")
    body = cashout_body(
        platformId=USER, chain="SOL", address=usdt_account, requestId="req-00000002"
    )
    refused = data(desk.post("/secure/crypto/withdraw", body, headers=alice.headers))
    withdrawal = CryptoWithdrawal.objects.get(pk=refused["id"])
    assert (withdrawal.status, withdrawal.broadcast_attempts) == ("approved", 1)  # retried later
    assert "another mint" in withdrawal.reason_detail
    assert ledger.token_balance(wallet, "USDT") == Decimal("1")
    assert clean()


def test_the_hot_wallet_key_comes_from_the_environment(settings):
    keypair = Keypair()
    settings.CRYPTO_SOLANA_HOT_WALLET_KEY = str(keypair)  # base58 of its 64 bytes
    assert hot_wallet("SOL") == str(keypair.pubkey())
    settings.CRYPTO_SOLANA_HOT_WALLET_KEY = json.dumps(list(bytes(keypair)))  # solana-keygen
    assert solana_hot_wallet_keypair() == keypair
    settings.CRYPTO_SOLANA_HOT_WALLET_KEY = ""
    assert hot_wallet("SOL") == solana_owner(0)  # the HD key's index 0


def test_mints_come_from_the_environment_checked(monkeypatch):
    usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    monkeypatch.setenv("CRYPTO_SOL_TOKENS", f" USDC={usdc}:6 ,")
    assert _solana_mints() == {"USDC": (usdc, 6)}
    for wrong in (f"DAI={usdc}:6", f"USDC={usdc}", "USDC=0xA0b8:6", f"USDC={usdc}0:6"):
        monkeypatch.setenv("CRYPTO_SOL_TOKENS", wrong)
        with pytest.raises(ImproperlyConfigured):
            _solana_mints()


def test_the_gateway_is_idle_without_a_node(settings):
    settings.CRYPTO_CHAINS = "crypto.chains.solana.SolanaChains"
    settings.CRYPTO_RPC_URLS = {}
    get_chains.cache_clear()
    try:
        gateway = get_chains()
        assert isinstance(gateway, SolanaChains)
        assert gateway.chains == ()
        assert not solana_served()
        assert solana_scan() == 0
    finally:
        get_chains.cache_clear()
