"""Example requests and answers of the deposit operations in the OpenAPI document, in the story
of ``trading.trades.examples``."""

from typing import Any

from trading.trades.examples import CLIENT_TRADE, CLIENT_USER_ID, OWNER_TRADE_URL, SELF_TRADE

CLIENT_DEPOSIT_REQUEST = {
    "items": [{"itemId": "730_64080944511", "price": 66.18}],
    "game": "730",
    "externalId": "dep-2026-11-23-0007",
    "isInstant": True,
}

CLIENT_DEPOSIT: dict[str, Any] = {
    "id": "fd1d01bb-1b78-47b7-b9e7-e0e389f031d9",
    "type": "deposit",
    "source": "client",
    "status": "initiated",
    "game": "730",
    "externalId": "dep-2026-11-23-0007",
    **CLIENT_TRADE,
    "clientUserId": CLIENT_USER_ID,
    "items": [
        {
            "id": "730_64080944511",
            "name": "AK-47 | Redline",
            "type": "Rifle",
            "iconUrl": "https://cdn.sandbox.invalid/icons/730/000000.png",
            "marketHashName": "AK-47 | Redline (Factory New)",
            "appid": 730,
            "tradable": True,
            "amount": 1,
            "status": "initiated",
            "offer": {"price": 66.18},
        }
    ],
    "totalPrice": 66.18,
    "preCredit": 66.18,
    "pendingCredit": 0.00,
    "isInstant": True,
    "collateral": {"merchant": 56.18, "provider": 10.00},
    "createdAt": "2026-11-23T14:34:59.968Z",
    "updatedAt": "2026-11-23T14:34:59.968Z",
}

SELF_SELL_REQUEST = {
    "tradeUrl": OWNER_TRADE_URL,
    "items": [{"itemId": "730_64080952430", "price": 66.18}],
    "externalId": "sell-2026-11-23-0003",
}

SELF_SELL = {
    **CLIENT_DEPOSIT,
    "id": "e30f631b-f926-479e-9b6a-b7ad81660ed2",
    "source": "self",
    "externalId": "sell-2026-11-23-0003",
    **SELF_TRADE,
    "items": [{**CLIENT_DEPOSIT["items"][0], "id": "730_64080952430"}],
    "preCredit": 66.18,
    "pendingCredit": 0.00,
    "isInstant": False,
    "collateral": {"merchant": 0.00, "provider": 0.00},
    "createdAt": "2026-11-23T14:35:00.042Z",
    "updatedAt": "2026-11-23T14:35:00.042Z",
}
del SELF_SELL["clientUserId"]

# What refusals carry in ``details``.
DEPOSIT_ERROR_DETAILS = {
    "ITEMS_UNAVAILABLE": {"items": ["730_64080944511"]},
    "ITEMS_NOT_ACCEPTED": {"items": ["730_64081258698"]},
    "DEPOSIT_IN_PROGRESS": {"items": ["730_64080944511"]},
    "ITEM_OVERSTOCKED": {"items": ["730_64080944511"]},
    "PRICE_CHANGED": {"itemId": "730_64080944511", "price": 65.90},
}
