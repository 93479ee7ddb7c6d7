"""Ledger rows as the API shows them (contract 2.9)."""

from typing import Any

from ledger.selectors import ADMIN_KINDS, LedgerPage, ledger_row_expires_at


def ledger_row_json(row: dict[str, Any]) -> dict[str, Any]:
    is_admin = row["type"] in ADMIN_KINDS
    return {
        "id": str(row["id"]),
        "type": row["type"],
        "status": row["status"],
        "amount": {
            "usd": row["amount_usd"],
            # Token amounts are strings with 6 decimals; an admin row has no token: "0".
            "crypto": "0" if is_admin else format(row["amount_crypto"], "f"),
            "token": None if is_admin else row["token"] or None,
            "chain": None if is_admin else row["chain"] or None,
        },
        "fee": row["fee"],
        "address": row["address"] or None,
        "txnHash": row["txn_hash"] or None,
        "timestamps": {
            "created": row["created_at"],
            "completed": row["completed_at"],
            "updated": row["updated_at"],
        },
    }


def ledger_transaction_json(row: dict[str, Any]) -> dict[str, Any]:
    """The single lookup's row: the list's fields plus ``timestamps.expired``."""
    body = ledger_row_json(row)
    body["timestamps"]["expired"] = ledger_row_expires_at(row)
    return body


def ledger_page_json(page: LedgerPage) -> dict[str, Any]:
    return {
        "items": [ledger_row_json(row) for row in page.rows],
        "pagination": {
            "page": page.offset // page.limit + 1,
            "limit": page.limit,
            "total": page.total,
            "totalPages": -(-page.total // page.limit),
        },
    }
