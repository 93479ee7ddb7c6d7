from typing import Any

from django.conf import settings
from django.core import checks

from core.adapters import adapter_check
from crypto.chains.base import ChainError
from crypto.chains.evm import evm_served_chains
from crypto.evm.node import ChainMismatchError, evm_node


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    if not settings.CRYPTO_ENABLED:
        return []  # deposit addresses and cashouts answer ONCHAIN_DISABLED without asking a chain
    return adapter_check("CRYPTO_CHAINS", answer="ONCHAIN_DISABLED", check_id="crypto.001")


@checks.register()
def evm_nodes_check(**kwargs: Any) -> list[checks.CheckMessage]:
    """With the EVM gateway, each chain's node is asked whether it is the configured network's
    chain (its chain id, code at each token contract), so ``manage.py check`` and the commands
    that run the checks (``migrate``) refuse a node on another chain. One that does not answer
    is only a warning: a node may be down while the service is deployed."""
    if not settings.CRYPTO_ENABLED or outside_systems_check():
        return []  # no gateway, or one that cannot be loaded: crypto.W001 / crypto.E001 say so
    found: list[checks.CheckMessage] = []
    for chain in evm_served_chains():
        try:
            evm_node(chain)
        except ChainMismatchError as exc:
            found.append(
                checks.Error(
                    f"{chain}: {exc}.",
                    hint=f"Point CRYPTO_{chain}_RPC_URL at a node of that chain, or set "
                    "CRYPTO_NETWORK (and CRYPTO_<CHAIN>_TOKENS) for the chain it is on.",
                    id="crypto.E002",
                )
            )
        except ChainError as exc:
            found.append(
                checks.Warning(
                    f"{chain}: its node could not be asked which chain it is: {exc}.",
                    hint="The gateway asks again at its first contact and refuses the chain "
                    "until the node proves to be the configured network's.",
                    id="crypto.W002",
                )
            )
    return found
