"""Ledger rows as the API shows them (contract 2.9): each shape once, as a ``TypedDict`` the body
builders return and the OpenAPI document is generated from."""

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, TypedDict, cast

from core.shapes import Doc
from ledger.models import ADMIN_KINDS, INITIATED_VISIBLE_FOR, USD_PER_TOKEN, Funding

FundingType = Literal["DEPOSIT", "WITHDRAWAL", "REFUND", "INTERNAL_TRANSFER"]
FundingStatus = Literal[
    "INITIATED",
    "PENDING",
    "PENDING_ADMIN",
    "APPROVED",
    "REJECTED",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "REFUNDED",
    "EXPIRED",
]
# A staff credit or debit shows as a row of its own types, always POSTED.
RowType = Literal[FundingType, "ADMIN_CREDIT", "ADMIN_DEBIT"]
RowStatus = Literal[FundingStatus, "POSTED"]


class LedgerAmountOut(TypedDict):
    usd: Decimal
    crypto: Annotated[str, Doc('Token amount with 6 decimals; "0" on admin rows.')]
    token: str | None
    chain: str | None
    exchangeRate: Annotated[
        str | None, Doc("USD per token of a funding in a token (e.g. 1.00); null without one.")
    ]


class LedgerTimestampsOut(TypedDict):
    created: datetime
    completed: datetime | None
    updated: datetime


class LedgerTransactionTimestampsOut(LedgerTimestampsOut):
    expired: Annotated[
        datetime | None, Doc("INITIATED fundings: created + 24 hours; otherwise null.")
    ]


class _RowMoney(TypedDict):
    """What the list's rows and the single lookup's row both show of the money."""

    amount: LedgerAmountOut
    fee: Decimal
    address: str | None
    txnHash: str | None


CENT = Decimal("0.01")
ROW_ID = Doc("Funding id, or the ledger transaction id of admin rows.")


class LedgerRowOut(_RowMoney):
    id: Annotated[str, ROW_ID]
    type: RowType
    status: RowStatus
    timestamps: LedgerTimestampsOut


class LedgerTransactionOut(_RowMoney):
    """A funding's row (the single lookup never shows an admin row), with its expiry."""

    id: Annotated[str, ROW_ID]
    type: FundingType
    status: FundingStatus
    timestamps: LedgerTransactionTimestampsOut


class LedgerPaginationOut(TypedDict):
    page: Annotated[int, Doc("offset // limit + 1")]
    limit: int
    total: int
    totalPages: int


class LedgerPageOut(TypedDict):
    items: list[LedgerRowOut]
    pagination: LedgerPaginationOut


def _money(row: dict[str, Any]) -> _RowMoney:
    is_admin = row["type"] in ADMIN_KINDS
    token = None if is_admin else row["token"] or None
    return {
        "amount": {
            # Two decimals whatever the database hands back (SQLite keeps 10000 as 10000).
            "usd": row["amount_usd"].quantize(CENT),
            # Token amounts are strings with 6 decimals; an admin row has no token: "0".
            "crypto": "0" if is_admin else format(row["amount_crypto"], "f"),
            "token": token,
            "chain": None if is_admin else row["chain"] or None,
            "exchangeRate": format(USD_PER_TOKEN, "f") if token else None,
        },
        "fee": row["fee"].quantize(CENT),
        "address": row["address"] or None,
        "txnHash": row["txn_hash"] or None,
    }


def _timestamps(row: dict[str, Any]) -> LedgerTimestampsOut:
    return {
        "created": row["created_at"],
        "completed": row["completed_at"],
        "updated": row["updated_at"],
    }


def ledger_row_json(row: dict[str, Any]) -> LedgerRowOut:
    """A row of the ledger's union (a funding or a staff credit or debit)."""
    return {
        "id": str(row["id"]),
        "type": cast(RowType, row["type"]),
        "status": cast(RowStatus, row["status"]),
        **_money(row),
        "timestamps": _timestamps(row),
    }


def _expires_at(row: dict[str, Any]) -> datetime | None:
    """When an INITIATED funding drops out of the list; other statuses never do."""
    if row["status"] != Funding.Status.INITIATED:
        return None
    created_at: datetime = row["created_at"]
    return created_at + INITIATED_VISIBLE_FOR


def ledger_transaction_json(row: dict[str, Any]) -> LedgerTransactionOut:
    """A funding's row: the list's fields plus ``timestamps.expired``."""
    return {
        "id": str(row["id"]),
        "type": cast(FundingType, row["type"]),
        "status": cast(FundingStatus, row["status"]),
        **_money(row),
        "timestamps": {**_timestamps(row), "expired": _expires_at(row)},
    }


def ledger_page_json(
    *, rows: list[dict[str, Any]], total: int, limit: int, offset: int
) -> LedgerPageOut:
    return {
        "items": [ledger_row_json(row) for row in rows],
        "pagination": {
            "page": offset // limit + 1,
            "limit": limit,
            "total": total,
            "totalPages": -(-total // limit),
        },
    }


# The feed's ``deposit`` event (decisions section 10). Stablecoins are credited 1:1 and a deposit
# address has no invoice, so nothing is ever overpaid.
STABLECOIN_RATE_USD = "1"
NOTHING_USD = "0.00"


class FundingAmountsOut(TypedDict):
    usd: Annotated[str, Doc("USD, e.g. 12.34")]
    token: Annotated[str, Doc("Token amount with 6 decimals")]


class FundingAssetOut(TypedDict):
    token: str
    chain: str
    exchangeRateUsdPerToken: str


class FundingEventOut(TypedDict):
    id: Annotated[str, Doc("Funding id (GET /v1/ledger/transactions/{id})")]
    merchantId: str
    status: FundingStatus
    amounts: FundingAmountsOut
    asset: FundingAssetOut
    address: str
    txnHash: str
    creditedUsd: Annotated[str, Doc("USD credited to the wallet so far")]
    overpaymentUsd: str
    createdAt: datetime
    completedAt: datetime | None


def funding_event_json(funding: Funding) -> FundingEventOut:
    """A crypto deposit's funding as the feed's ``deposit`` event shows it."""
    credited = funding.status == Funding.Status.COMPLETED
    return {
        "id": str(funding.id),
        "merchantId": str(funding.merchant_id),
        "status": cast(FundingStatus, funding.status),
        "amounts": {
            "usd": format(funding.amount_usd, "f"),
            "token": format(funding.amount_crypto, "f"),
        },
        "asset": {
            "token": funding.token,
            "chain": funding.chain,
            "exchangeRateUsdPerToken": STABLECOIN_RATE_USD,
        },
        "address": funding.address,
        "txnHash": funding.txn_hash,
        "creditedUsd": format(funding.amount_usd, "f") if credited else NOTHING_USD,
        "overpaymentUsd": NOTHING_USD,
        "createdAt": funding.created_at,
        "completedAt": funding.completed_at,
    }
