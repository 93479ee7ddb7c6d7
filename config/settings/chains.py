"""Crypto: the chains behind one interface (CRYPTO_CHAINS), the network whose tokens are
credited, the HD key every deposit address is derived from, and the real EVM and Solana nodes."""

import os
import string

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import SANDBOX
from config.settings.environment import env_bool, env_int, env_list
from config.settings.outside import outside_system

CRYPTO_CHAINS = outside_system("CRYPTO_CHAINS", "sandbox.chains.SandboxChains")
# With a node gateway (EVM, Solana): the gateway of the chains it has no node for.
CRYPTO_OTHER_CHAINS = outside_system("CRYPTO_OTHER_CHAINS", "sandbox.chains.SandboxChains")
CRYPTO_ENABLED = env_bool("CRYPTO_ENABLED", True)
CRYPTO_NETWORK = os.environ.get("CRYPTO_NETWORK", "testnet" if SANDBOX else "mainnet")
if CRYPTO_NETWORK not in ("mainnet", "testnet"):
    raise ImproperlyConfigured("CRYPTO_NETWORK must be mainnet or testnet.")
# The well-known development mnemonic (its keys are public): sandbox and quick start only.
SANDBOX_HD_MNEMONIC = "test test test test test test test test test test test junk"
CRYPTO_HD_MNEMONIC = os.environ.get("CRYPTO_HD_MNEMONIC") or (
    SANDBOX_HD_MNEMONIC if SANDBOX else ""
)
if CRYPTO_ENABLED and not CRYPTO_HD_MNEMONIC:
    raise ImproperlyConfigured(
        "CRYPTO_HD_MNEMONIC must be set outside the sandbox: the BIP-39 mnemonic every deposit "
        "address derives from (or CRYPTO_ENABLED=false)."
    )
# Chains whose credits and broadcasts wait (addresses stay valid), e.g. "ETH,SOL".
CRYPTO_PAUSED_CHAINS = frozenset(chain.upper() for chain in env_list("CRYPTO_PAUSED_CHAINS"))
CRYPTO_MIN_DEPOSIT_CENTS = {"ETH": 1000, "BSC": 100, "SOL": 100}
CRYPTO_MIN_CONFIRMATIONS = {
    "ETH": env_int("CRYPTO_ETH_CONFIRMATIONS", 12),
    "BSC": env_int("CRYPTO_BSC_CONFIRMATIONS", 15),
    "SOL": 32,
}
# Cashouts: a flat fee per chain, and the least the recipient may receive after it.
CRYPTO_WITHDRAW_FEE_CENTS = {"ETH": 500, "BSC": 50, "SOL": 50}
CRYPTO_WITHDRAW_MIN_RECEIVE_CENTS = {"ETH": 1000, "BSC": 100, "SOL": 100}
# Above these (per merchant, overridable in the admin) staff review the money first.
CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS = env_int("CRYPTO_DEPOSIT_REVIEW_ABOVE_CENTS", 1_000_000)
CRYPTO_WITHDRAW_REVIEW_ABOVE_CENTS = env_int("CRYPTO_WITHDRAW_REVIEW_ABOVE_CENTS", 500_000)
# Solana token accounts cost rent while open: at most this many at once, service-wide.
CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS = env_int("CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS", 10_000)
# Sandbox chains: seconds of service clock a Solana token account takes to open.
CRYPTO_SANDBOX_ACCOUNT_OPEN_SECONDS = env_int("CRYPTO_SANDBOX_ACCOUNT_OPEN_SECONDS", 10)
# Broadcast attempts before a cashout fails (and is refunded), and the wait after each failure.
CRYPTO_BROADCAST_ATTEMPTS = 3
CRYPTO_BROADCAST_RETRY_SECONDS = (30, 120)


# Real EVM chains (CRYPTO_CHAINS=crypto.chains.evm.EvmChains): a JSON-RPC node per chain. A chain
# without one goes to CRYPTO_OTHER_CHAINS (docs/decisions.md).
def _token_contracts(chain: str) -> dict[str, tuple[str, int]]:
    """``CRYPTO_<CHAIN>_TOKENS=USDC=0x...:6,USDT=0x...:6``: contracts replacing the network's,
    kept EIP-55 checksummed (web3 refuses any other form). One written in a single case carries
    no checksum and is checksummed here; one in mixed case must carry the right checksum, else
    it holds a typo and the service does not start (docs/decisions.md, "Real EVM chains")."""
    setting = f"CRYPTO_{chain}_TOKENS"
    entries = env_list(setting)
    if not entries:
        return {}
    from eth_utils import is_hex_address, to_checksum_address  # only when contracts are named

    tokens: dict[str, tuple[str, int]] = {}
    for entry in entries:
        symbol, _, rest = entry.partition("=")
        contract, _, decimals = rest.partition(":")
        if (
            symbol not in ("USDT", "USDC")
            or not contract.startswith("0x")
            or not is_hex_address(contract)
            or not decimals.isdigit()
        ):
            raise ImproperlyConfigured(f"{setting}: '{entry}' is not SYMBOL=0x...:DECIMALS.")
        checksummed = to_checksum_address(contract)
        digits = contract[2:]
        if digits not in (digits.lower(), digits.upper()) and contract != checksummed:
            raise ImproperlyConfigured(
                f"{setting}: {symbol}'s contract {contract} fails its EIP-55 checksum, so it "
                "holds a typo: copy it again from the token issuer's page."
            )
        tokens[symbol] = (checksummed, int(decimals))
    return tokens


SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def _evm_hot_wallet_key() -> str:
    """A secp256k1 private key (64 hex digits, 0x optional), or empty (the HD key's index 0).
    Refused at start otherwise, its value never shown: no cashout could be signed with it."""
    key = os.environ.get("CRYPTO_EVM_HOT_WALLET_KEY", "")
    digits = key.removeprefix("0x")
    if key and not (
        len(digits) == 64
        and all(c in string.hexdigits for c in digits)
        and 0 < int(digits, 16) < SECP256K1_ORDER
    ):
        raise ImproperlyConfigured(
            "CRYPTO_EVM_HOT_WALLET_KEY is not a secp256k1 private key (64 hex digits, 0x "
            "optional); its value is not shown."
        )
    return key


def _solana_mints() -> dict[str, tuple[str, int]]:
    """``CRYPTO_SOL_TOKENS=USDC=<mint>:6,USDT=<mint>:6``: SPL mints (base58 of 32 bytes)
    replacing the network's."""
    from solders.pubkey import Pubkey

    mints: dict[str, tuple[str, int]] = {}
    for entry in env_list("CRYPTO_SOL_TOKENS"):
        symbol, _, rest = entry.partition("=")
        mint, _, decimals = rest.partition(":")
        try:
            valid = len(bytes(Pubkey.from_string(mint))) == 32
        except ValueError:
            valid = False
        if symbol not in ("USDT", "USDC") or not valid or not decimals.isdigit():
            raise ImproperlyConfigured(
                f"CRYPTO_SOL_TOKENS: '{entry}' is not SYMBOL=<mint>:DECIMALS."
            )
        mints[symbol] = (mint, int(decimals))
    return mints


CRYPTO_RPC_URLS = {
    chain: url
    for chain in ("ETH", "BSC", "SOL")
    if (url := os.environ.get(f"CRYPTO_{chain}_RPC_URL"))
}
CRYPTO_TOKEN_CONTRACTS = {chain: _token_contracts(chain) for chain in ("ETH", "BSC")} | {
    "SOL": _solana_mints()
}
# The key cashouts are signed with (hex); unset, the HD key's index 0. Never commit one.
CRYPTO_EVM_HOT_WALLET_KEY = _evm_hot_wallet_key()
# Blocks per eth_getLogs call of the deposit scanner (a node refusing a range gets half of it).
CRYPTO_EVM_SCAN_BLOCKS = env_int("CRYPTO_EVM_SCAN_BLOCKS", 500)
# An own transaction still out of a block this long is replaced at higher fees (same nonce).
CRYPTO_EVM_FEE_BUMP_SECONDS = env_int("CRYPTO_EVM_FEE_BUMP_SECONDS", 180)
# Scheduled sweeps move a deposit address's token balance to the hot wallet from this many tokens.
CRYPTO_EVM_SWEEP_MIN_TOKENS = env_int("CRYPTO_EVM_SWEEP_MIN_TOKENS", 50)

# Real Solana (crypto.chains.solana.SolanaChains; crypto.chains.nodes.NodeChains serves it beside
# the EVM chains): the node at CRYPTO_SOL_RPC_URL, the mints of CRYPTO_SOL_TOKENS (else the
# network's), the commitment at which deposits are credited and cashouts complete.
CRYPTO_SOLANA_COMMITMENT = os.environ.get("CRYPTO_SOLANA_COMMITMENT", "finalized")
if CRYPTO_SOLANA_COMMITMENT not in ("finalized", "confirmed"):
    raise ImproperlyConfigured("CRYPTO_SOLANA_COMMITMENT must be finalized or confirmed.")
# The hot wallet's keypair (base58 of its 64 bytes, or solana-keygen's JSON array); unset, the
# HD key's Solana index 0. It pays every fee and rent and sends cashouts. Never commit one.
CRYPTO_SOLANA_HOT_WALLET_KEY = os.environ.get("CRYPTO_SOLANA_HOT_WALLET_KEY", "")
# The priority fee (ComputeBudget setComputeUnitPrice, micro-lamports per compute unit) of a first
# signing; each signing again after an expiry doubles it, up to the ceiling.
CRYPTO_SOLANA_PRIORITY_FEE_MICROLAMPORTS = env_int(
    "CRYPTO_SOLANA_PRIORITY_FEE_MICROLAMPORTS", 10_000
)
CRYPTO_SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS = env_int(
    "CRYPTO_SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS", 2_000_000
)
# Seconds of service clock between two scans of one deposit account, and the signatures asked
# for per getSignaturesForAddress page (1 to 1,000).
CRYPTO_SOLANA_SCAN_SECONDS = env_int("CRYPTO_SOLANA_SCAN_SECONDS", 15)
CRYPTO_SOLANA_SCAN_PAGE = env_int("CRYPTO_SOLANA_SCAN_PAGE", 1000)
# Scheduled sweeps move a deposit account's tokens to the hot wallet from this many tokens.
CRYPTO_SOLANA_SWEEP_MIN_TOKENS = env_int("CRYPTO_SOLANA_SWEEP_MIN_TOKENS", 50)
