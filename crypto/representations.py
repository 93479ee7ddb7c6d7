"""The JSON of crypto deposits (contract 2.8), cashouts (decisions section 6) and deposit
addresses (contract 2.7): each shape once, as a ``TypedDict`` the body builders return and the
OpenAPI document is generated from."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal, TypedDict, cast

from core.shapes import Doc, Uuid
from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.networks import Token

Chain = Literal["ETH", "BSC", "SOL"]
TokenSymbol = Literal["USDT", "USDC"]
DepositStatus = Literal["pending", "completed", "below_minimum", "frozen", "refunded", "failed"]
WithdrawalStatus = Literal[
    "awaiting_approval",
    "in_review",
    "approved",
    "sent",
    "completed",
    "failed",
    "rejected",
    "cancelled",
]
AddressStatus = Literal["active", "pending", "paused"]


class TokenOut(TypedDict):
    token: TokenSymbol
    contract: str
    decimals: int


class DepositAddressOut(TypedDict):
    platformId: str
    chain: Chain
    network: str
    testnet: bool
    status: AddressStatus
    address: str | None
    tokenAccount: str | None
    tokens: list[TokenOut]
    minDepositCents: int
    minConfirmations: int
    explorerUrl: str | None


# ``from`` is a Python keyword: the functional form names it.
DepositOut = TypedDict(
    "DepositOut",
    {
        "id": Uuid,
        "type": Literal["crypto_deposit"],
        "status": DepositStatus,
        "platformId": str,
        "chain": Chain,
        "token": TokenSymbol,
        "amount": Annotated[str, Doc("USD credited 1:1 with the token, e.g. 12.34")],
        "amountCents": int,
        "cryptoAmount": Annotated[str, Doc("Token amount as sent")],
        "address": str,
        "txHash": str,
        "from": Annotated[str | None, Doc("Sender, when known")],
        "createdAt": datetime,
        "updatedAt": datetime,
        "completedAt": datetime | None,
    },
)


class DepositPageOut(TypedDict):
    deposits: list[DepositOut]
    nextBefore: datetime | None


class WithdrawalOut(TypedDict):
    id: Uuid
    type: Literal["crypto_withdraw"]
    status: WithdrawalStatus
    platformId: str
    chain: Chain
    token: TokenSymbol
    amount: Annotated[str, Doc("USD, e.g. 25.00")]
    amountCents: int
    feeCents: int
    receiveCents: int
    cryptoAmount: Annotated[str, Doc("Token amount the address receives")]
    address: str
    txHash: str | None
    reason: str | None
    createdAt: datetime
    updatedAt: datetime
    completedAt: datetime | None


class WithdrawalPageOut(TypedDict):
    withdrawals: list[WithdrawalOut]
    nextBefore: datetime | None


def token_amount(value: Decimal) -> str:
    """A token amount as a plain decimal string, without trailing zeros or an exponent."""
    return format(value.normalize(), "f")


def deposit_json(deposit: CryptoDeposit) -> DepositOut:
    return {
        "id": str(deposit.id),
        "type": "crypto_deposit",
        "status": cast(DepositStatus, deposit.status),
        "platformId": deposit.platform_id,
        "chain": cast(Chain, deposit.chain),
        "token": cast(TokenSymbol, deposit.token),
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


def withdrawal_json(withdrawal: CryptoWithdrawal) -> WithdrawalOut:
    return {
        "id": str(withdrawal.id),
        "type": "crypto_withdraw",
        "status": cast(WithdrawalStatus, withdrawal.status),
        "platformId": withdrawal.platform_id,
        "chain": cast(Chain, withdrawal.chain),
        "token": cast(TokenSymbol, withdrawal.token),
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


def deposit_address_json(found: DepositAddress) -> DepositAddressOut:
    return {
        "platformId": found.platform_id,
        "chain": cast(Chain, found.chain),
        "network": found.network,
        "testnet": found.testnet,
        "status": cast(AddressStatus, found.status),
        "address": found.address,
        "tokenAccount": found.token_account,
        "tokens": [
            {"token": cast(TokenSymbol, t.symbol), "contract": t.contract, "decimals": t.decimals}
            for t in found.tokens
        ],
        "minDepositCents": found.min_deposit_cents,
        "minConfirmations": found.min_confirmations,
        "explorerUrl": found.explorer_url,
    }


def deposit_page_json(rows: list[CryptoDeposit], next_before: datetime | None) -> DepositPageOut:
    return {"deposits": [deposit_json(row) for row in rows], "nextBefore": next_before}


def withdrawal_page_json(
    rows: list[CryptoWithdrawal], next_before: datetime | None
) -> WithdrawalPageOut:
    return {"withdrawals": [withdrawal_json(row) for row in rows], "nextBefore": next_before}
