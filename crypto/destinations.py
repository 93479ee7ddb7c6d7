"""Where a cashout may go: an address valid for its chain that does not burn what it is sent.

A valid address is EIP-55 on ETH and BSC (a typo fails the checksum) and base58 of 32 bytes on
Solana. Refused beside the malformed ones, because tokens sent there reach nobody
(docs/decisions.md, "Cashout destinations"):

- EVM: the reserved range below 0x10000. No key signs for an address whose first 18 bytes are
  zero and no contract is deployed there (both are hashes); what lives there are the zero address,
  the precompiles (0x01-0x11; 0x100 on some rollups), BSC's system contracts (0x1000-0x2005) and
  the conventional burn address 0x000000000000000000000000000000000000dEaD. Also the vanity burn
  address 0xdEAD000000000000000042069420694206942069.
- Solana (the address is the recipient's wallet, the owner of the token account the cashout
  opens): the system program (all zeros), the incinerator (solana-program's
  ``incinerator::id()``: lamports credited there are burnt), the token programs, the associated
  token account program and the wrapped SOL mint. None of them ever signs to move tokens.
- Every chain: the network's token contracts (mints) and the service's own hot wallet (and on
  Solana its token accounts): the tokens would stay with the token's contract, or come back to the
  service and credit nobody. Deposit addresses are allowed: what arrives there is credited to
  their owner, as any deposit.
"""

from functools import cache

from django.conf import settings

from core.errors import DomainError
from crypto.keys import (
    ASSOCIATED_TOKEN_PROGRAM,
    TOKEN_PROGRAM,
    associated_token_account,
    evm_address_valid,
    hot_wallet,
    solana_address_valid,
)
from crypto.networks import EVM_CHAINS, SOL, network

EVM_RESERVED_BELOW = 0x10000
EVM_BURN_ADDRESSES = frozenset({"0xdead000000000000000042069420694206942069"})  # lower case
SOLANA_BURN_ADDRESSES = {
    "11111111111111111111111111111111": "the system program",
    "1nc1nerator11111111111111111111111111111111": "the incinerator",
    str(TOKEN_PROGRAM): "the SPL token program",
    "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb": "the Token-2022 program",
    str(ASSOCIATED_TOKEN_PROGRAM): "the associated token account program",
    "So11111111111111111111111111111111111111112": "the wrapped SOL mint",
}


def _refused(address: str, why: str) -> DomainError:
    return DomainError(
        "ONCHAIN_WITHDRAW_INVALID_ADDRESS", f"{address} is {why}: tokens sent there are lost."
    )


def _own_addresses(chain: str) -> dict[str, str]:
    return _own_addresses_of(
        chain,
        settings.CRYPTO_NETWORK,
        repr(settings.CRYPTO_TOKEN_CONTRACTS.get(chain)),
        settings.CRYPTO_HD_MNEMONIC,
        settings.CRYPTO_EVM_HOT_WALLET_KEY,
        settings.CRYPTO_SOLANA_HOT_WALLET_KEY,
    )


@cache
def _own_addresses_of(chain: str, *configuration: str) -> dict[str, str]:
    """The chain's token contracts and the hot wallet (on Solana with its token accounts), by
    address as compared (lower case on EVM chains), naming what each is. Kept per configuration
    (the settings it derives from), since deriving the hot wallet takes milliseconds."""
    tokens = network(chain).tokens.values()
    wallet = hot_wallet(chain)
    own = {token.contract: f"the {token.symbol} token's contract" for token in tokens}
    own[wallet] = "the service's hot wallet"
    if chain == SOL:
        for token in tokens:
            account = associated_token_account(owner=wallet, mint=token.contract)
            own[account] = f"the service's {token.symbol} token account"
    if chain in EVM_CHAINS:
        return {address.lower(): what for address, what in own.items()}
    return own


def cashout_address_check(*, chain: str, address: str) -> None:
    """Raise ONCHAIN_WITHDRAW_INVALID_ADDRESS (3004) unless a cashout may pay ``address``."""
    if chain in EVM_CHAINS:
        if not evm_address_valid(address):
            raise DomainError(
                "ONCHAIN_WITHDRAW_INVALID_ADDRESS",
                f"Not a valid {chain} address (0x and 40 hex digits, EIP-55 checksummed).",
            )
        compared = address.lower()
        if int(compared, 16) == 0:
            raise _refused(address, "the zero address")
        if int(compared, 16) < EVM_RESERVED_BELOW or compared in EVM_BURN_ADDRESSES:
            raise _refused(address, "a burn or reserved system address")
    else:
        if not solana_address_valid(address):
            raise DomainError(
                "ONCHAIN_WITHDRAW_INVALID_ADDRESS",
                f"Not a valid {chain} address (base58 of a 32-byte public key).",
            )
        compared = address
        if address in SOLANA_BURN_ADDRESSES:
            raise _refused(address, SOLANA_BURN_ADDRESSES[address])
    own = _own_addresses(chain)
    if compared in own:
        raise _refused(address, own[compared])
