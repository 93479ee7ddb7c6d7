"""The JSON of crypto deposits (contract 2.8), cashouts (decisions section 6) and deposit
addresses (contract 2.7)."""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.networks import Token


def token_amount(value: Decimal) -> str:
    """A token amount as a plain decimal string, without trailing zeros or an exponent."""
    return format(value.normalize(), "f")


def deposit_json(deposit: CryptoDeposit) -> dict[str, Any]:
    return {
        "id": str(deposit.id),
        "type": "crypto_deposit",
        "status": deposit.status,
        "platformId": deposit.platform_id,
        "chain": deposit.chain,
        "token": deposit.token,
        "amount": format(deposit.amount_usd, "f"),
        "amountCents": deposit.amount_cents,
        "cryptoAmount": token_amount(deposit.amount_crypto),
        "address": deposit.address,
        "txHash": deposit.tx_hash,
        "from": deposit.from_address or None,
        "createdAt": deposit.created_at,
        "updatedAt": deposit.updated_at,
        "completedAt": deposit.completed_at,
    }


def withdrawal_json(withdrawal: CryptoWithdrawal) -> dict[str, Any]:
    return {
        "id": str(withdrawal.id),
        "type": "crypto_withdraw",
        "status": withdrawal.status,
        "platformId": withdrawal.platform_id,
        "chain": withdrawal.chain,
        "token": withdrawal.token,
        "amount": format(withdrawal.amount, ".2f"),
        "amountCents": withdrawal.amount_cents,
        "feeCents": withdrawal.fee_cents,
        "receiveCents": withdrawal.receive_cents,
        "cryptoAmount": format(Decimal(withdrawal.receive_cents) / 100, ".6f"),
        "address": withdrawal.address,
        "txHash": withdrawal.tx_hash or None,
        "reason": withdrawal.reason or None,
        "createdAt": withdrawal.created_at,
        "updatedAt": withdrawal.updated_at,
        "completedAt": withdrawal.completed_at,
    }


@dataclass(frozen=True)
class DepositAddress:
    platform_id: str
    chain: str
    network: str
    testnet: bool
    status: str
    address: str | None
    token_account: str | None
    tokens: list[Token]
    min_deposit_cents: int
    min_confirmations: int
    explorer_url: str | None


def deposit_address_json(found: DepositAddress) -> dict[str, Any]:
    return {
        "platformId": found.platform_id,
        "chain": found.chain,
        "network": found.network,
        "testnet": found.testnet,
        "status": found.status,
        "address": found.address,
        "tokenAccount": found.token_account,
        "tokens": [
            {"token": t.symbol, "contract": t.contract, "decimals": t.decimals}
            for t in found.tokens
        ],
        "minDepositCents": found.min_deposit_cents,
        "minConfirmations": found.min_confirmations,
        "explorerUrl": found.explorer_url,
    }
