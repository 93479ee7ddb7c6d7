"""The Solana gateway against the recorded JSON-RPC server: a server per test with its two test
mints, the service pointed at it for SOL (ETH and BSC stay the sandbox's), the hot wallet holding
SOL for fees and rent and tokens to pay cashouts, and each deposit account scanned at every run
(the scanner's wait between two scans set to 0)."""

from collections.abc import Iterator
from typing import Any

import pytest

from crypto.chains import get_chains
from crypto.keys import hot_wallet
from crypto.tasks import solana_scan, sweep_deposits
from tests.crypto.conftest import USER, data, deposit_address
from tests.crypto.solana.rpc import SolanaRpc, solana_rpc
from tests.factories import Actor

HOT_WALLET_TOKENS = "10000"
HOT_WALLET_LAMPORTS = 10 * 10**9


@pytest.fixture
def solana(settings, db: None) -> Iterator[SolanaRpc]:
    with solana_rpc() as rpc:
        ledger = rpc.ledger
        settings.CRYPTO_CHAINS = "crypto.chains.solana.SolanaChains"
        settings.CRYPTO_RPC_URLS = {"SOL": rpc.url}
        settings.CRYPTO_TOKEN_CONTRACTS = {
            "ETH": {},
            "BSC": {},
            "SOL": {"USDC": (ledger.mints["USDC"], 6), "USDT": (ledger.mints["USDT"], 6)},
        }
        settings.CRYPTO_SOLANA_SCAN_SECONDS = 0
        get_chains.cache_clear()
        hot = hot_wallet("SOL")
        ledger.airdrop(hot, HOT_WALLET_LAMPORTS)
        ledger.mint(hot, "USDC", HOT_WALLET_TOKENS)
        ledger.mint(hot, "USDT", HOT_WALLET_TOKENS)
        try:
            yield rpc
        finally:
            get_chains.cache_clear()


def open_address(desk, actor: Actor, token: str = "USDC", user: str = USER) -> dict[str, Any]:
    """Ask for the token's account until the chain has opened it (the server lands the opening
    in the next block): pending first, then active."""
    first = deposit_address(desk, actor, "SOL", token, user)
    assert first["status"] == "pending", first
    opened = deposit_address(desk, actor, "SOL", token, user)
    assert opened["status"] == "active", opened
    return opened


def deposits(desk, actor: Actor, user: str = USER) -> list[dict[str, Any]]:
    response = desk.get(
        "/secure/crypto/deposits", headers=actor.headers, params={"platformId": user}
    )
    return data(response)["deposits"]


def observe(desk) -> None:
    """What beat does: the scanner, then the deposit sweep (their webhooks delivered)."""
    desk.run(solana_scan)
    desk.run(sweep_deposits)
