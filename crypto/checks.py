from typing import Any

from django.conf import settings
from django.core import checks

from core.adapters import adapter_check, adapter_load
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
