"""The chain gateway when none is configured (``CRYPTO_CHAINS`` unset outside the sandbox):
every call raises ChainError, so deposit addresses and cashouts answer ``ONCHAIN_DISABLED``
instead of pretending; ``manage.py check`` warns about it."""

from decimal import Decimal

from crypto.chains.base import ChainError, TransferState

UNCONFIGURED = "No chain gateway is configured (CRYPTO_CHAINS)."


class UnconfiguredChains:
    def status(self, chain: str, *, tenant: str) -> str:
        raise ChainError(UNCONFIGURED)

    def token_account_open(self, *, owner: str, mint: str, address: str) -> None:
        raise ChainError(UNCONFIGURED)

    def token_account_state(self, *, address: str) -> str:
        raise ChainError(UNCONFIGURED)

    def token_account_close(self, *, address: str) -> str:
        raise ChainError(UNCONFIGURED)

    def transfer_state(self, *, chain: str, tx_hash: str) -> TransferState | None:
        raise ChainError(UNCONFIGURED)

    def broadcast(
        self, *, tenant: str, chain: str, contract: str, to: str, amount: Decimal, key: str
    ) -> str:
        raise ChainError(UNCONFIGURED)
