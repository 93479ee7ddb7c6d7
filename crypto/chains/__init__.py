from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from crypto.chains.base import ChainGateway


@cache
def get_chains() -> ChainGateway:
    """The chain gateway this deployment talks to, named by the CRYPTO_CHAINS setting."""
    chains: ChainGateway = import_string(settings.CRYPTO_CHAINS)()
    return chains
