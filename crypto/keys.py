"""Addresses from the service's HD key (CRYPTO_HD_MNEMONIC), and address checks.

EVM: BIP-44 m/44'/60'/0'/0/{index} (secp256k1), one EIP-55 address shared by ETH and BSC.
Solana: m/44'/501'/{index}'/0' (ed25519, SLIP-0010, as Phantom and solana-keygen derive), and per
token the associated token account: the program address of [owner, token program, mint] under
the associated token account program.
"""

import json
from functools import cache

from django.conf import settings
from eth_account import Account
from eth_account.hdaccount import key_from_seed, seed_from_mnemonic
from eth_utils import is_checksum_address
from solders.keypair import Keypair
from solders.pubkey import Pubkey

TOKEN_PROGRAM = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
ASSOCIATED_TOKEN_PROGRAM = Pubkey.from_string("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")


@cache
def _seed(mnemonic: str) -> bytes:
    # BIP-39: the mnemonic's words are checked against the English list and its checksum.
    return bytes(seed_from_mnemonic(mnemonic, ""))


def evm_private_key(index: int, *, mnemonic: str | None = None) -> bytes:
    seed = _seed(mnemonic or settings.CRYPTO_HD_MNEMONIC)
    return bytes(key_from_seed(seed, f"m/44'/60'/0'/0/{index}"))


def evm_address(index: int, *, mnemonic: str | None = None) -> str:
    return str(Account.from_key(evm_private_key(index, mnemonic=mnemonic)).address)


def evm_hot_wallet_key() -> bytes:
    """CRYPTO_EVM_HOT_WALLET_KEY when the operator gave one, else the HD key's index 0."""
    configured = settings.CRYPTO_EVM_HOT_WALLET_KEY
    return bytes(Account.from_key(configured).key) if configured else evm_private_key(0)


def solana_keypair(index: int, *, mnemonic: str | None = None) -> Keypair:
    seed = _seed(mnemonic or settings.CRYPTO_HD_MNEMONIC)
    return Keypair.from_seed_and_derivation_path(seed, f"m/44'/501'/{index}'/0'")


def solana_owner(index: int, *, mnemonic: str | None = None) -> str:
    return str(solana_keypair(index, mnemonic=mnemonic).pubkey())


def solana_hot_wallet_keypair() -> Keypair:
    """CRYPTO_SOLANA_HOT_WALLET_KEY when the operator gave one (base58 of the 64 bytes, or the
    JSON array solana-keygen writes), else the HD key's index 0."""
    configured = settings.CRYPTO_SOLANA_HOT_WALLET_KEY.strip()
    if not configured:
        return solana_keypair(0)
    if configured.startswith("["):
        return Keypair.from_bytes(bytes(json.loads(configured)))
    return Keypair.from_base58_string(configured)


def hot_wallet(chain: str) -> str:
    """Index 0 sends cashouts unless a key of the chain's own is configured; users' allocations
    start at 1."""
    if chain == "SOL":
        return str(solana_hot_wallet_keypair().pubkey())
    return str(Account.from_key(evm_hot_wallet_key()).address)


def associated_token_account(*, owner: str, mint: str) -> str:
    address, _bump = Pubkey.find_program_address(
        [
            bytes(Pubkey.from_string(owner)),
            bytes(TOKEN_PROGRAM),
            bytes(Pubkey.from_string(mint)),
        ],
        ASSOCIATED_TOKEN_PROGRAM,
    )
    return str(address)


def evm_address_valid(address: str) -> bool:
    """0x and 40 hex digits in EIP-55 mixed case: a typo fails the checksum."""
    return isinstance(address, str) and bool(is_checksum_address(address))


def solana_address_valid(address: str) -> bool:
    """Base58 of exactly 32 bytes (an account's public key)."""
    if not isinstance(address, str) or not 32 <= len(address) <= 44:
        return False
    try:
        Pubkey.from_string(address)
    except ValueError:
        return False
    return True
