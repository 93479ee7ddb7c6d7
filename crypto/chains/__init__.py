from functools import cache

from core.adapters import adapter_load
from crypto.chains.base import ChainGateway
from crypto.chains.unconfigured import UnconfiguredChains


@cache
def get_chains() -> ChainGateway:
    """The chain gateway this deployment talks to, named by the CRYPTO_CHAINS setting."""
    chains: ChainGateway = adapter_load("CRYPTO_CHAINS", UnconfiguredChains)
    return chains
