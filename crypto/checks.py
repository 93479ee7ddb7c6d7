from typing import Any

from django.conf import settings
from django.core import checks

from core.adapters import adapter_check, adapter_load
from crypto.chains.base import ChainError
from crypto.chains.evm import evm_served_chains
from crypto.evm.node import ChainMismatchError, evm_node
from crypto.networks import SOL


@checks.register()
def outside_systems_check(**kwargs: Any) -> list[checks.CheckMessage]:
    if not settings.CRYPTO_ENABLED:
        return []  # deposit addresses and cashouts answer ONCHAIN_DISABLED without asking a chain
    found = adapter_check("CRYPTO_CHAINS", answer="ONCHAIN_DISABLED", check_id="crypto.001")
    return found or solana_check()


def solana_check() -> list[checks.CheckMessage]:
    """A gateway that serves chains by their nodes (EVM, Solana) passes on those it has no
    node for: Solana among them, with nothing behind it, answers ONCHAIN_DISABLED."""
    from crypto.chains import chain_gateway
    from crypto.chains.unconfigured import UnconfiguredChains

    try:
        root = adapter_load("CRYPTO_CHAINS", UnconfiguredChains)  # the settings as they are now
        unserved = isinstance(chain_gateway(SOL, root=root), UnconfiguredChains)
    except Exception as exc:  # whatever stops CRYPTO_OTHER_CHAINS loading
        return [
            checks.Error(
                f"CRYPTO_OTHER_CHAINS={settings.CRYPTO_OTHER_CHAINS} cannot be loaded: {exc}",
                hint="The sandbox's adapters need SANDBOX=true.",
                id="crypto.E002",
            )
        ]
    if not unserved:
        return []
    return [
        checks.Warning(
            "Solana is not served: no Solana node (CRYPTO_SOL_RPC_URL with CRYPTO_CHAINS="
            "crypto.chains.solana.SolanaChains or crypto.chains.nodes.NodeChains) and "
            "CRYPTO_OTHER_CHAINS is not set: SOL deposit addresses and cashouts answer "
            "ONCHAIN_DISABLED.",
            hint="Point CRYPTO_SOL_RPC_URL at a Solana node (README, 'Solana').",
            id="crypto.W002",
        )
    ]


@checks.register()
def evm_nodes_check(**kwargs: Any) -> list[checks.CheckMessage]:
    """With the EVM gateway, each chain's node is asked whether it is the configured network's
    chain (its chain id, code at each token contract), so ``manage.py check`` and the commands
    that run the checks (``migrate``) refuse a node on another chain. One that does not answer
    is only a warning: a node may be down while the service is deployed."""
    if not settings.CRYPTO_ENABLED or adapter_check(
        "CRYPTO_CHAINS", answer="ONCHAIN_DISABLED", check_id="crypto.001"
    ):
        return []  # no gateway, or one that cannot be loaded: crypto.W001 / crypto.E001 say so
    try:
        served = evm_served_chains()
    except Exception:  # CRYPTO_OTHER_CHAINS cannot be loaded: crypto.E002 says so
        return []
    found: list[checks.CheckMessage] = []
    for chain in served:
        try:
            evm_node(chain)
        except ChainMismatchError as exc:
            found.append(
                checks.Error(
                    f"{chain}: {exc}.",
                    hint=f"Point CRYPTO_{chain}_RPC_URL at a node of that chain, or set "
                    "CRYPTO_NETWORK (and CRYPTO_<CHAIN>_TOKENS) for the chain it is on.",
                    id="crypto.E003",
                )
            )
        except ChainError as exc:
            found.append(
                checks.Warning(
                    f"{chain}: its node could not be asked which chain it is: {exc}.",
                    hint="The gateway asks again at its first contact and refuses the chain "
                    "until the node proves to be the configured network's.",
                    id="crypto.W003",
                )
            )
    return found
