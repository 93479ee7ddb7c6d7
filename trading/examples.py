"""Example requests and answers of the trading operations in the OpenAPI document, as the sandbox
gives them: its catalog (``730-000000`` AK-47 | Redline (Factory New), ...), its listings, bots and
times. One story: a merchant, its client (platform id ...739, partner 11) and another account
(...740, partner 12) that the merchant's self trades deliver to or take from.

``tests/test_openapi_docs.py`` checks every example against its operation's schemas."""

from typing import Any

from trading.deposits.examples import CLIENT_DEPOSIT, SELF_SELL
from trading.trades.examples import (
    CLIENT_TRADE,
    CLIENT_USER_ID,
    OWNER_TRADE_URL,
    SELF_TRADE,
)

# -- Trades.

CLIENT_WITHDRAW_REQUEST = {
    "items": [
        {"itemId": "4612c31f-49b3-495e-9f91-fde507791596", "price": 2.85, "externalId": "line-1"},
        {"itemId": "1c7c0762-a3d9-4d2e-86a8-146eb3da66b1", "price": 32.41, "externalId": "line-2"},
    ],
    "game": "730",
    "externalId": "wd-2026-11-23-0042",
    "autoCancel": 60,
}


def _submitted_item(item_id: str, price: float, external_id: str) -> dict[str, Any]:
    """A withdrawal item as created: only what was submitted, before the catalog resolves it."""
    return {
        "id": item_id,
        "appid": 730,
        "tradable": True,
        "amount": 1,
        "status": "initiated",
        "offer": {"price": price, "delivery": "standard"},
        "externalId": external_id,
    }


CLIENT_WITHDRAWAL = {
    "id": "1447ede4-7c43-4de8-89ff-3971134d1828",
    "type": "withdraw",
    "source": "client",
    "status": "initiated",
    "game": "730",
    "externalId": "wd-2026-11-23-0042",
    **CLIENT_TRADE,
    "clientUserId": CLIENT_USER_ID,
    "items": [
        _submitted_item("4612c31f-49b3-495e-9f91-fde507791596", 2.85, "line-1"),
        _submitted_item("1c7c0762-a3d9-4d2e-86a8-146eb3da66b1", 32.41, "line-2"),
    ],
    "totalPrice": 35.26,
    "autoCancelAt": "2026-11-23T15:34:59.325Z",
    "createdAt": "2026-11-23T14:34:59.325Z",
    "updatedAt": "2026-11-23T14:34:59.325Z",
}

SELF_BUY_REQUEST = {
    "tradeUrl": OWNER_TRADE_URL,
    "items": [
        {"itemId": "afb88328-f83e-4237-8f72-477d645cd3cf", "price": 66.69, "externalId": "line-1"}
    ],
    "game": "730",
    "externalId": "buy-2026-11-23-0001",
}

SELF_BUY = {
    "id": "7b4a1eb1-27de-4045-9bc2-95c264fda5af",
    "type": "withdraw",
    "source": "self",
    "status": "initiated",
    "game": "730",
    "externalId": "buy-2026-11-23-0001",
    **SELF_TRADE,
    "items": [_submitted_item("afb88328-f83e-4237-8f72-477d645cd3cf", 66.69, "line-1")],
    "totalPrice": 66.69,
    "createdAt": "2026-11-23T14:34:59.076Z",
    "updatedAt": "2026-11-23T14:34:59.076Z",
}

_REDLINE_FN_ITEM = {
    "name": "AK-47 | Redline",
    "type": "Rifle",
    "iconUrl": "https://cdn.sandbox.invalid/icons/730/000000.png",
    "marketHashName": "AK-47 | Redline (Factory New)",
}

# The self buy once bought and offered (the sandbox's ``purchased``).
SELF_BUY_OFFERED: dict[str, Any] = {
    **SELF_BUY,
    "status": "active",
    "items": [
        {
            **_REDLINE_FN_ITEM,
            **_submitted_item("afb88328-f83e-4237-8f72-477d645cd3cf", 66.69, "line-1"),
            "status": "active",
            "offerID": "17954444990003",
        }
    ],
    "updatedAt": "2026-11-23T14:35:04.175Z",
    "offerID": "17954444990003",
    "activeAt": "2026-11-23T14:35:04.175Z",
}

# The self buy once the recipient accepted: in the trade protection window.
SELF_BUY_IN_HOLD = {
    **SELF_BUY_OFFERED,
    "status": "hold",
    "items": [
        {
            **SELF_BUY_OFFERED["items"][0],
            "status": "hold",
            "holdEndDate": "2026-12-01T14:35:09.210Z",
        }
    ],
    "updatedAt": "2026-11-23T14:35:09.211Z",
    "holdEndDate": "2026-12-01T14:35:09.210Z",
}

QUICK_WITHDRAW_REQUEST = {
    "itemId": "730-000003",
    "maxPrice": 45.00,
    "amount": 2,
    "delivery": "standard",
    "game": "730",
    "externalId": "quick-2026-11-23-0005",
}

SECURE_QUICK_BUY_REQUEST = {**QUICK_WITHDRAW_REQUEST, "tradeUrl": OWNER_TRADE_URL}


def _ceiling_row() -> dict[str, Any]:
    """A unit of a quick withdrawal at creation: the catalog id and the ceiling price."""
    return {
        "id": "730-000003",
        "appid": 730,
        "tradable": True,
        "amount": 1,
        "status": "initiated",
        "offer": {"price": 45.00, "delivery": "standard"},
    }


QUICK_WITHDRAWAL = {
    "id": "91d5f02e-bbad-47d5-afa3-6fcd8b5786e7",
    "type": "withdraw",
    "source": "client",
    "status": "initiated",
    "game": "730",
    "externalId": "quick-2026-11-23-0005",
    **CLIENT_TRADE,
    "clientUserId": CLIENT_USER_ID,
    "items": [_ceiling_row(), _ceiling_row()],
    "totalPrice": 90.00,
    "createdAt": "2026-11-23T14:34:59.563Z",
    "updatedAt": "2026-11-23T14:34:59.563Z",
}

SELF_QUICK_BUY = {
    **QUICK_WITHDRAWAL,
    "id": "415aa695-0db5-4899-aa61-cc98ed8dce84",
    "source": "self",
    **SELF_TRADE,
    "createdAt": "2026-11-23T14:34:59.422Z",
    "updatedAt": "2026-11-23T14:34:59.422Z",
}
del SELF_QUICK_BUY["clientUserId"]

# The client withdrawal half an hour later: one item cancelled, the other being bought.
CLIENT_WITHDRAWAL_LATER = {
    **CLIENT_WITHDRAWAL,
    "status": "pending",
    "items": [
        {
            "name": "M4A4 | Redline",
            "type": "Rifle",
            "iconUrl": "https://cdn.sandbox.invalid/icons/730/000006.png",
            "marketHashName": "M4A4 | Redline (Minimal Wear)",
            **_submitted_item("4612c31f-49b3-495e-9f91-fde507791596", 2.85, "line-1"),
            "status": "canceled",
        },
        {
            "name": "AK-47 | Redline",
            "type": "Rifle",
            "iconUrl": "https://cdn.sandbox.invalid/icons/730/000004.png",
            "marketHashName": "AK-47 | Redline (Battle-Scarred)",
            **_submitted_item("1c7c0762-a3d9-4d2e-86a8-146eb3da66b1", 32.41, "line-2"),
            "status": "pending",
        },
    ],
    "updatedAt": "2026-11-23T15:05:59.682Z",
}

NEXT_CURSOR = (
    "MjAyNi0xMS0yM1QxNDozNDo1OS40MjIxNzcrMDA6MDB8NDE1YWE2OTUtMGRiNS00ODk5LWFhNjEtY2M5OGVkOGRjZTg0"
)

SECURE_TRADE_PAGE = {"items": [SELF_BUY_IN_HOLD, SELF_SELL], "nextCursor": NEXT_CURSOR}
CLIENT_TRADE_PAGE = {"items": [CLIENT_WITHDRAWAL_LATER, CLIENT_DEPOSIT], "nextCursor": None}

# -- Cancels.

# Half an hour after the client withdrawal: the marketplace cancelled one item and refused the
# other, already being delivered.
CLIENT_TRADE_CANCEL = {
    "tradeId": CLIENT_WITHDRAWAL["id"],
    "requested": 2,
    "cancelled": 1,
    "failed": 1,
    "items": [
        {
            "itemId": "4612c31f-49b3-495e-9f91-fde507791596",
            "status": "cancelled",
            "externalId": "line-1",
        },
        {
            "itemId": "1c7c0762-a3d9-4d2e-86a8-146eb3da66b1",
            "status": "failed",
            "externalId": "line-2",
            "reason": "TRADE_NOT_CANCELLABLE",
        },
    ],
}

# Asked too early: the self buy is younger than 30 minutes.
SELF_TRADE_CANCEL = {
    "tradeId": SELF_BUY["id"],
    "requested": 1,
    "cancelled": 0,
    "failed": 1,
    "items": [
        {
            "itemId": "afb88328-f83e-4237-8f72-477d645cd3cf",
            "status": "failed",
            "externalId": "line-1",
            "reason": "TRADE_CANCEL_TOO_SOON",
        }
    ],
}

CLIENT_ITEM_CANCEL = {
    "tradeId": CLIENT_WITHDRAWAL["id"],
    "itemId": "4612c31f-49b3-495e-9f91-fde507791596",
    "status": "cancelled",
    "externalId": "line-1",
}

SELF_ITEM_CANCEL = {
    "tradeId": SELF_BUY["id"],
    "itemId": "afb88328-f83e-4237-8f72-477d645cd3cf",
    "status": "cancelled",
    "externalId": "line-1",
}

# -- What refusals carry in ``details``.

WITHDRAW_ERROR_DETAILS = {
    "PRICE_CHANGED": {"itemId": "afb88328-f83e-4237-8f72-477d645cd3cf", "price": 67.12},
}
