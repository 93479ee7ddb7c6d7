from functools import cache

from core.adapters import adapter_load
from crypto.chains.base import ChainGateway
from crypto.chains.unconfigured import UnconfiguredChains


@cache
def get_chains() -> ChainGateway:
    """The chain gateway this deployment talks to, named by the CRYPTO_CHAINS setting."""
    chains: ChainGateway = adapter_load("CRYPTO_CHAINS", UnconfiguredChains)
    return chains


def chain_gateway(chain: str, *, root: ChainGateway | None = None) -> ChainGateway:
    """The gateway that answers for ``chain`` (in ``root``, else the deployment's): a node
    gateway (EVM, Solana) passes the chains it has no node for (``chains``) to the one behind
    it (``other``); any other gateway answers for every chain."""
    gateway = root or get_chains()
    while chain not in getattr(gateway, "chains", (chain,)):
        gateway = gateway.other  # type: ignore[attr-defined]
    return gateway
