"""Every chain with a node configured, over JSON-RPC: SOL through the Solana gateway
(``CRYPTO_SOL_RPC_URL``), ETH and BSC through the EVM gateway (``CRYPTO_<CHAIN>_RPC_URL``); a chain
without a node goes on to the gateway ``CRYPTO_OTHER_CHAINS`` names (the sandbox's with
SANDBOX), else to the unconfigured one. ``CRYPTO_CHAINS=crypto.chains.nodes.NodeChains``."""

from crypto.chains.evm import EvmChains
from crypto.chains.solana import SolanaChains


class NodeChains(SolanaChains):
    def __init__(self) -> None:
        super().__init__(other=EvmChains())
