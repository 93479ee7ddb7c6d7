"""The real EVM chains (ETH, BSC) over JSON-RPC, for every chain with a node configured
(``CRYPTO_<CHAIN>_RPC_URL``): transaction states from receipts and the head, cashouts signed by
the hot wallet with managed nonces. Deposits are found by the scanner (``crypto.evm.scanner``),
fee bumps and resends by the transactions sweep, sweeps of deposit addresses by
``crypto.evm.sweeps``. Every other chain goes to the gateway it is given (``NodeChains`` gives
it the Solana one's), else to the one ``CRYPTO_OTHER_CHAINS`` names (the sandbox's with
SANDBOX), else to the unconfigured one: its addresses and cashouts answer ONCHAIN_DISABLED.

A chain whose node is not the configured network's (``crypto.evm.node``: its chain id, its token
contracts) cannot be asked its status: addresses and cashouts answer ONCHAIN_DISABLED, and nothing
is scanned, signed or sent on it."""

import logging
from decimal import Decimal

from core.adapters import adapter_load
from crypto.chains import chain_gateway
from crypto.chains.base import (
    BroadcastError,
    ChainError,
    ChainGateway,
    ChainStatus,
    TransferState,
    whole_units,
)
from crypto.chains.unconfigured import UnconfiguredChains
from crypto.evm.models import EvmAttempt, EvmTransaction, EvmTransferLog
from crypto.evm.node import erc20_transfer_data, evm_chains_configured, evm_node
from crypto.evm.transactions import evm_transaction_send, evm_transaction_sighting
from crypto.keys import evm_hot_wallet_key
from crypto.networks import EVM_CHAINS

logger = logging.getLogger(__name__)


class EvmChains:
    def __init__(self, other: ChainGateway | None = None) -> None:
        self.chains = evm_chains_configured()
        self.other: ChainGateway = other or adapter_load("CRYPTO_OTHER_CHAINS", UnconfiguredChains)

    def status(self, chain: str, *, tenant: str) -> str:
        # A halt of a real chain is the operator's call: CRYPTO_PAUSED_CHAINS. The node is asked
        # only at a process's first contact (is it the network's chain?), then remembered.
        if chain in self.chains:
            evm_node(chain)
            return ChainStatus.ACTIVE
        return self.other.status(chain, tenant=tenant)

    def token_account_open(self, *, owner: str, mint: str, address: str) -> None:
        self.other.token_account_open(owner=owner, mint=mint, address=address)

    def token_account_state(self, *, address: str) -> str:
        return self.other.token_account_state(address=address)

    def token_account_close(self, *, address: str) -> str:
        return self.other.token_account_close(address=address)

    def transfer_state(self, *, chain: str, tx_hash: str) -> TransferState | None:
        if chain not in self.chains:
            return self.other.transfer_state(chain=chain, tx_hash=tx_hash)
        try:
            ours = EvmAttempt.objects.filter(tx_hash=tx_hash).select_related("evm_transaction")
            if ours:
                seen = evm_transaction_sighting(ours[0].evm_transaction)
                return TransferState(
                    tx_hash=seen.tx_hash,
                    confirmations=seen.confirmations,
                    dropped=seen.dropped,
                    reverted=seen.succeeded is False,
                )
            return _incoming_state(chain, tx_hash)
        except ChainError as exc:
            logger.warning("%s %s: no answer from the node: %s", chain, tx_hash, exc)
            return None  # the sweeps ask again

    def broadcast(
        self, *, tenant: str, chain: str, contract: str, to: str, amount: Decimal, key: str
    ) -> str:
        if chain not in self.chains:
            return self.other.broadcast(
                tenant=tenant, chain=chain, contract=contract, to=to, amount=amount, key=key
            )
        units, _ = whole_units(chain, contract, amount)
        chain_key = f"cashout:{key}"
        try:
            sent = evm_transaction_send(
                chain=chain,
                key=chain_key,
                purpose=EvmTransaction.Purpose.CASHOUT,
                sender_key=evm_hot_wallet_key(),
                to=contract,
                data=erc20_transfer_data(to=to, value=units),
            )
        except ChainError as exc:
            raise BroadcastError(str(exc)) from exc  # raised before signing: nothing went out
        except Exception as exc:
            # web3 or eth-account refusing an input (an address, a key): a refusal too, retried
            # then failed and refunded, unless a transaction was signed (then it stands).
            if EvmTransaction.objects.filter(key=chain_key).exists():
                raise
            logger.exception("%s cashout %s refused before signing", chain, key)
            raise BroadcastError(f"refused before signing: {exc!r}") from exc
        return sent.attempts.order_by("-id")[0].tx_hash


def _incoming_state(chain: str, tx_hash: str) -> TransferState | None:
    """A deposit's transaction. Dropped only when the node has lost it and the block the
    scanner saw it in is no longer the chain's: a reorganisation, not a node out of step."""
    node = evm_node(chain)
    receipt = node.receipt(tx_hash)
    if receipt is not None:
        return TransferState(
            tx_hash=tx_hash,
            confirmations=max(0, node.head() - receipt.block_number + 1),
            dropped=False,
            reverted=not receipt.succeeded,
        )
    if node.knows(tx_hash):
        return TransferState(tx_hash=tx_hash, confirmations=0, dropped=False)
    seen = EvmTransferLog.objects.filter(chain=chain, tx_hash=tx_hash).first()
    if seen is None or node.block_hash(seen.block_number) == seen.block_hash:
        return None
    return TransferState(tx_hash=tx_hash, confirmations=0, dropped=True)


def evm_served_chains() -> tuple[str, ...]:
    """The EVM chains this deployment serves over JSON-RPC: none unless CRYPTO_CHAINS is (or
    holds) this gateway (the scanner and the sweeps are then idle)."""
    return tuple(chain for chain in EVM_CHAINS if isinstance(chain_gateway(chain), EvmChains))
