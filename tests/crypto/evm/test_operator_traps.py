"""The traps a real EVM deployment set for its operator (issue 25, item 9; decisions section 12):
a node on another chain than the configured network's, a token contract that is not on the
node's chain, a cashout the signing libraries refuse left `approved` for ever, and a scanner
whose start and lag nobody could see."""

import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from crypto.chains import get_chains
from crypto.chains.base import BroadcastError
from crypto.evm import scanner
from crypto.evm.models import EvmCursor, EvmTransaction
from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.selectors import chain_scan_states
from crypto.services.deposits import crypto_deposit_observe, crypto_deposits_sweep
from crypto.tasks import evm_scan, sweep_withdrawals
from tests.crypto.conftest import (
    RECIPIENT,
    USER,
    cashout_body,
    confirm,
    data,
    deposit_address,
    money,
    send,
)
from tests.crypto.evm.chain import Anvil, Chain
from tests.factories import assert_error

pytestmark = pytest.mark.django_db

LOCAL_CHAIN_ID = 31337  # anvil's and hardhat's own
ROOT = Path(__file__).resolve().parents[3]
MAINNET_USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
MAINNET_USDT = "0xdAC17F958D2ee523a2206206994597C13D831ec7"


def manage(*command: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A ``manage.py`` command started with these variables, as a process of the service
    starts: the settings are read from the environment."""
    return subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env=os.environ | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_token_contracts_written_in_one_case_are_checksummed_at_start():
    """web3 refuses any address but the EIP-55 one: a contract kept as written in lower case
    made every cashout a refused broadcast."""
    started = manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings; print(settings.CRYPTO_TOKEN_CONTRACTS)",
        CRYPTO_ETH_TOKENS=f"USDC={MAINNET_USDC.lower()}:6,USDT=0x{MAINNET_USDT[2:].upper()}:6",
        CRYPTO_BSC_TOKENS=f"USDC={MAINNET_USDC}:6",
    )
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == str(
        {
            "ETH": {"USDC": (MAINNET_USDC, 6), "USDT": (MAINNET_USDT, 6)},
            "BSC": {"USDC": (MAINNET_USDC, 6)},
            "SOL": {},
        }
    )


def test_a_contract_with_a_wrong_checksum_or_a_bad_hot_wallet_key_refuses_to_start():
    typo = MAINNET_USDC[:-1] + "b"  # the last letter's case: a checksum that fails
    refused = manage("check", CRYPTO_ETH_TOKENS=f"USDC={typo}:6")
    assert refused.returncode != 0
    assert f"CRYPTO_ETH_TOKENS: USDC's contract {typo} fails its EIP-55 checksum" in (
        refused.stderr
    )

    refused = manage("check", CRYPTO_EVM_HOT_WALLET_KEY="0xdeadbeef")
    assert refused.returncode != 0
    assert "CRYPTO_EVM_HOT_WALLET_KEY is not a secp256k1 private key" in refused.stderr
    assert "deadbeef" not in refused.stderr + refused.stdout  # a secret is never shown


@pytest.fixture
def local_node(tmp_path: Path, settings) -> Iterator[Chain]:
    """A local development node (anvil's own chain id) with the tokens deployed, configured as
    the ETH node of a deployment that says it is on mainnet: the issue's "ethereum-mainnet" with
    an etherscan link."""
    node = Anvil(tmp_path / "anvil.log", chain_id=LOCAL_CHAIN_ID).start()
    try:
        evm = Chain(node)
        settings.CRYPTO_NETWORK = "mainnet"
        settings.CRYPTO_CHAINS = "crypto.chains.evm.EvmChains"
        settings.CRYPTO_RPC_URLS = {"ETH": node.url}
        settings.CRYPTO_TOKEN_CONTRACTS = {
            "ETH": {"USDC": (evm.usdc.address, 6), "USDT": (evm.usdt.address, 6)},
            "BSC": {},
        }
        get_chains.cache_clear()
        yield evm
    finally:
        get_chains.cache_clear()
        node.stop()


def address_of(desk, actor):
    return desk.get(
        "/secure/crypto/deposit-address",
        headers=actor.headers,
        params={"chain": "ETH", "platformId": USER},
    )


def secure_cashout(desk, actor, **fields):
    body = cashout_body(platformId=USER) | fields
    return desk.post("/secure/crypto/withdraw", body, headers=actor.headers)


def test_a_node_on_another_chain_is_refused_everywhere(desk, alice, local_node, caplog):
    # The merchant's requests: no address nobody scans, no cashout nothing could send.
    assert_error(address_of(desk, alice), 503, 2500, "ONCHAIN_DISABLED")
    assert_error(secure_cashout(desk, alice), 503, 2500, "ONCHAIN_DISABLED")
    assert not CryptoWithdrawal.objects.exists()
    assert money(alice)["available"] == Decimal("1000.00")

    # The scanner reads nothing and starts no cursor at the wrong chain's head.
    assert evm_scan() == 0
    assert not EvmCursor.objects.exists()
    [refusal] = [r for r in caplog.records if r.name == scanner.__name__]
    assert refusal.levelname == "ERROR"
    for words in (
        "CRYPTO_ETH_RPC_URL",
        f"chain id {LOCAL_CHAIN_ID}",
        "ethereum-mainnet (chain id 1)",
    ):
        assert words in refusal.getMessage()

    # The operator's check says so, naming the setting.
    with pytest.raises(SystemCheckError) as refused:
        call_command("check")
    assert "crypto.E003" in str(refused.value)
    assert "CRYPTO_ETH_RPC_URL" in str(refused.value)


def test_the_sweeps_leave_a_refused_chains_rows_and_serve_the_others(
    desk, alice, local_node, settings
):
    """A pending ETH deposit (recorded before the node was found on another chain) waits; the
    BSC one beside it is credited by the same sweep."""
    settings.CRYPTO_CHAINS = "sandbox.chains.SandboxChains"
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"ETH", "BSC"})  # credits wait
    get_chains.cache_clear()
    address = deposit_address(desk, alice, "BSC")["address"]  # the same address on ETH
    for chain in ("ETH", "BSC"):
        made = data(send(desk, alice, chain, address, "20"))
        data(confirm(desk, alice, made["txHash"], 20))
    settings.CRYPTO_CHAINS = "crypto.chains.evm.EvmChains"
    settings.CRYPTO_PAUSED_CHAINS = frozenset()
    get_chains.cache_clear()

    desk.run(crypto_deposits_sweep)  # ETH's status is refused: its row is left, not the run

    statuses = dict(CryptoDeposit.objects.values_list("chain", "status"))
    assert statuses == {"ETH": "pending", "BSC": "completed"}
    assert money(alice)["available"] == Decimal("1020.00")


def test_approved_cashouts_wait_while_the_node_is_refused_then_go(
    desk, alice, chain: Chain, settings, clock_advance
):
    """Nothing is signed against a node on the wrong chain, and nothing is refunded either: a
    cashout's fate is the gateway's to tell, and it cannot be asked."""
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"ETH"})
    made = data(secure_cashout(desk, alice))
    settings.CRYPTO_PAUSED_CHAINS = frozenset()
    settings.CRYPTO_NETWORK = "mainnet"  # the node answers Sepolia's chain id: refused

    for _ in range(4):
        desk.run(sweep_withdrawals)
        clock_advance(max(settings.CRYPTO_BROADCAST_RETRY_SECONDS) + 1)
    waiting = CryptoWithdrawal.objects.get(pk=made["id"])
    assert (waiting.status, waiting.broadcast_attempts) == ("approved", 0)
    assert not EvmTransaction.objects.exists()
    assert money(alice)["locked"] == Decimal("25.00")

    settings.CRYPTO_NETWORK = "testnet"
    desk.run(sweep_withdrawals)
    sent = CryptoWithdrawal.objects.get(pk=made["id"])
    assert sent.status == "sent"
    assert chain.mined(sent.tx_hash)["status"] == 1


def test_a_signed_cashout_stands_when_its_node_is_refused_and_no_new_one_is_signed(
    desk, alice, chain: Chain, settings
):
    made = CryptoWithdrawal.objects.get(pk=data(secure_cashout(desk, alice))["id"])
    assert made.status == "sent"  # its approval's broadcast ran after the answer
    settings.CRYPTO_NETWORK = "mainnet"  # the node answers Sepolia's chain id: refused
    gateway = get_chains()
    ask = {
        "tenant": str(alice.merchant.pk),
        "chain": "ETH",
        "contract": chain.usdc.address,
        "to": RECIPIENT,
        "amount": Decimal("20"),
    }

    # A worker that died after signing asks again: the same transaction, not a refusal.
    assert gateway.broadcast(**ask, key=str(made.id)) == made.tx_hash
    with pytest.raises(BroadcastError, match="chain id 11155111"):
        gateway.broadcast(**ask, key="a-new-cashout")
    assert EvmTransaction.objects.count() == 1


def test_a_token_contract_without_code_on_the_node_is_refused(desk, alice, chain: Chain, settings):
    """A contract address with a typo (here an account with no code) would make every cashout
    a call that transfers nothing and every deposit invisible."""
    settings.CRYPTO_TOKEN_CONTRACTS = {
        "ETH": {"USDC": (RECIPIENT, 6), "USDT": (chain.usdt.address, 6)},
        "BSC": {},
    }
    EvmCursor.objects.all().delete()
    assert_error(address_of(desk, alice), 503, 2500, "ONCHAIN_DISABLED")
    assert evm_scan() == 0
    assert not EvmCursor.objects.exists()
    with pytest.raises(SystemCheckError) as refused:
        call_command("check")
    assert f"no contract at {RECIPIENT}, the USDC token" in str(refused.value)


def test_a_cashout_refused_before_signing_fails_and_is_refunded_not_left_approved(
    desk, alice, chain: Chain, settings, clock_advance, caplog
):
    """eth-account refusing the hot wallet's key (raised as its own ValueError, not as a chain
    error) used to escape the worker each time: the cashout stayed `approved`, re-queued by
    every sweep, with nothing said. It is a refused broadcast now: retried, then failed,
    refunded, logged."""
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"ETH"})  # approved, not broadcast yet
    made = data(secure_cashout(desk, alice))
    assert made["status"] == "approved"
    settings.CRYPTO_PAUSED_CHAINS = frozenset()
    settings.CRYPTO_EVM_HOT_WALLET_KEY = "0x1234"  # past the start-up check: as if it were let in

    for _ in range(len(settings.CRYPTO_BROADCAST_RETRY_SECONDS) + 1):
        desk.run(sweep_withdrawals)
        clock_advance(max(settings.CRYPTO_BROADCAST_RETRY_SECONDS) + 1)

    failed = CryptoWithdrawal.objects.get(pk=made["id"])
    assert (failed.status, failed.reason, failed.tx_hash) == ("failed", "BROADCAST_FAILED", "")
    assert "refused before signing" in failed.reason_detail
    assert money(alice)["available"] == Decimal("1000.00")
    assert money(alice)["locked"] == Decimal("0.00")
    assert not EvmTransaction.objects.exists()
    assert any(r.levelname == "ERROR" and made["id"] in r.getMessage() for r in caplog.records), (
        "the final failure is logged as an error"
    )


@pytest.mark.django_db(transaction=True)  # /health reads in a thread of its own: committed rows
def test_the_scanners_start_and_lag_show_in_health_and_the_admin_without_asking_the_node(
    api, chain: Chain, settings
):
    cursor = EvmCursor.objects.get(chain="ETH")
    first = cursor.first_block
    assert first is not None
    assert cursor.next_block == first + 1  # the fixture's first scan read the head block

    caught_up = api.get("/health").json()["data"]["chains"]["ETH"]
    assert caught_up["firstBlock"] == first
    assert caught_up["lastScannedBlock"] == first
    assert caught_up["head"] == first
    assert (caught_up["lagBlocks"], caught_up["lagSeconds"]) == (0, 0)
    assert caught_up["startedAt"].endswith("Z")
    assert caught_up["lastScanAt"].endswith("Z")

    # 30 blocks 12 s apart; one step reads only 10 of them.
    chain.rpc("anvil_mine", hex(30), hex(12))
    settings.CRYPTO_EVM_SCAN_BLOCKS = 10
    scanner.evm_deposits_scan_step(chain="ETH", observe=crypto_deposit_observe)
    chain.anvil.stop()  # from here no node answers: what shows is what the scanner stored

    behind = api.get("/health")
    assert behind.status_code == 200
    shown = behind.json()["data"]["chains"]["ETH"]
    assert shown["firstBlock"] == first
    assert shown["lastScannedBlock"] == first + 10
    assert shown["head"] == first + 30
    assert (shown["lagBlocks"], shown["lagSeconds"]) == (20, 20 * 12)

    [state] = chain_scan_states()  # what the metrics read
    assert (state.chain, state.lag_blocks, state.lag_seconds) == ("ETH", 20, 240)

    staff = User.objects.create_superuser("staff", "staff@example.com", "x")
    api.force_login(staff)
    page = api.get("/admin/crypto/evmcursor/")
    assert page.status_code == 200
    row = page.content.decode()
    for shown_value in (str(first), str(first + 10), str(first + 30), ">20<", ">240<"):
        assert shown_value in row, shown_value


def test_health_shows_no_chain_without_the_evm_gateway(api):
    assert api.get("/health").json()["data"]["chains"] == {}
