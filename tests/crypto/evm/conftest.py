"""The EVM gateway against a real node: a fresh anvil per test with the two test tokens deployed,
the service pointed at it for ETH (BSC stays the sandbox's), the hot wallet holding tokens, and
the deposit scanner's cursor set at the head."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from crypto.chains import get_chains
from crypto.keys import hot_wallet
from crypto.tasks import evm_scan
from tests.crypto.evm.chain import Anvil, Chain

HOT_WALLET_TOKENS = "10000"


@pytest.fixture
def chain(tmp_path: Path, settings, db: None) -> Iterator[Chain]:
    node = Anvil(tmp_path / "anvil.log").start()
    try:
        evm = Chain(node)
        settings.CRYPTO_CHAINS = "crypto.chains.evm.EvmChains"
        settings.CRYPTO_RPC_URLS = {"ETH": node.url}
        settings.CRYPTO_TOKEN_CONTRACTS = {
            "ETH": {"USDC": (evm.usdc.address, 6), "USDT": (evm.usdt.address, 6)},
            "BSC": {},
        }
        get_chains.cache_clear()
        evm.mint(evm.usdc, hot_wallet("ETH"), HOT_WALLET_TOKENS)
        evm.mint(evm.usdt, hot_wallet("ETH"), HOT_WALLET_TOKENS)
        evm_scan()  # the cursor starts at the head
        yield evm
    finally:
        get_chains.cache_clear()
        node.stop()
