"""Example requests and answers of the trading operations in the OpenAPI document, as the sandbox
gives them: its catalog (``730-000000`` AK-47 | Redline (Factory New), ...), its listings, bots and
times. One story: a merchant, its client (platform id ...739, partner 11) and another account
(...740, partner 12) that the merchant's self trades deliver to or take from.

``tests/test_openapi_docs.py`` checks every example against its operation's schemas."""

from typing import Any

MERCHANT_ID = "27849d0a-2716-47c8-b3b6-516042937f83"
CLIENT_PLATFORM_ID = "76561197960265739"
CLIENT_TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner=11&token=kT9x_2Qa"
OWNER_PLATFORM_ID = "76561197960265740"
OWNER_TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner=12&token=Rb7m-4Lp"
CLIENT_USER_ID = "318"

BOT = {
    "name": "Bot Cosmo",
    "avatar": "https://cdn.sandbox.invalid/bots/2.png",
    "platformId": "76561199000000002",
}

# -- Catalog and market.

REDLINE_FN = {
    "name": "AK-47 | Redline",
    "marketHashName": "AK-47 | Redline (Factory New)",
    "type": "Rifle",
    "iconUrl": "https://cdn.sandbox.invalid/icons/730/000000.png",
    "appid": 730,
    "rarity": "Consumer Grade",
    "color": "b0c3d9",
    "tradable": True,
    "amount": 1,
    "marketPrice": 73.54,
}

LISTING_INSTANT = {
    "id": "075c9b6b-56c5-4282-b89f-368f896fee7b",
    **REDLINE_FN,
    "offer": {"price": 66.61, "reference": "730-000000", "delivery": "instant"},
    "stickers": [
        {
            "name": "Sticker | The MongolZ | Katowice 2019",
            "marketHashName": "Sticker | The MongolZ | Katowice 2019",
            "slot": 1,
            "wear": 0.95,
            "iconUrl": "https://cdn.sandbox.invalid/icons/extras/1712623746984ad5.png",
        }
    ],
    "exterior": "Factory New",
    "wear": "0.0667391578",
    "paintSeed": 665,
    "previewToken": "9d84517e",
    "botInfo": BOT,
}

LISTING_STANDARD = {
    "id": "afb88328-f83e-4237-8f72-477d645cd3cf",
    **REDLINE_FN,
    "offer": {"price": 66.69, "reference": "730-000000", "delivery": "standard"},
    "stickers": [],
    "exterior": "Factory New",
    "wear": "0.0411517602",
    "paintSeed": 112,
}

# The first page of ``search=AK-47 | Redline (Factory New)&sort=priceAsc&perPage=2``.
MARKET_PAGE = {"items": [LISTING_INSTANT, LISTING_STANDARD], "count": 6}
MARKET_QUERY = {
    "game": "730",
    "search": "AK-47 | Redline (Factory New)",
    "sort": "priceAsc",
    "perPage": "2",
}

KARAMBIT_LISTING = {
    "id": "b31d685f-8367-4f65-acd8-efdf9b40c03d",
    "name": "★ Karambit | Doppler",
    "marketHashName": "★ Karambit | Doppler (Factory New)",
    "type": "Knife",
    "iconUrl": "https://cdn.sandbox.invalid/icons/730/000040.png",
    "appid": 730,
    "rarity": "Covert",
    "color": "eb4b4b",
    "tradable": True,
    "amount": 1,
    "marketPrice": 1249.98,
    "offer": {"price": 1383.95, "reference": "730-000040", "delivery": "instant"},
    "stickers": [
        {
            "name": "Sticker | ENCE | Copenhagen 2024",
            "marketHashName": "Sticker | ENCE | Copenhagen 2024",
            "slot": 0,
            "wear": 0.99,
            "iconUrl": "https://cdn.sandbox.invalid/icons/extras/13933fa9b8da9534.png",
        }
    ],
    "exterior": "Factory New",
    "wear": "0.0000363572",
    "paintSeed": 51,
    "doppler": {"name": "Black Pearl", "paintIndex": 417},
    "previewToken": "09c1be0d",
    "botInfo": {
        "name": "Bot Helios",
        "avatar": "https://cdn.sandbox.invalid/bots/7.png",
        "platformId": "76561199000000007",
    },
}


def _phase(phase: str, deposit: float, instant: float | None = None) -> dict[str, Any]:
    return {
        "phase": phase,
        "accepted": True,
        "deposit": deposit,
        "withdraw": {"standard": None, "instant": instant},
    }


PRICE_BOOK = [
    {
        "itemId": "730-000000",
        "marketHashName": "AK-47 | Redline (Factory New)",
        "accepted": True,
        "deposit": 66.18,
        "withdraw": {"standard": 66.69, "instant": 66.61},
    },
    {
        "itemId": "730-000029",
        "marketHashName": "Desert Eagle | Redline (Battle-Scarred)",
        "accepted": True,
        "deposit": 11.21,
        "withdraw": {"standard": 13.95, "instant": None},
    },
    {
        "itemId": "730-000040",
        "marketHashName": "★ Karambit | Doppler (Factory New)",
        "accepted": True,
        "deposit": 337.49,
        "withdraw": {"standard": None, "instant": 1383.95},
        "phases": [
            _phase("Phase 1", 356.24),
            _phase("Phase 2", 431.24),
            _phase("Phase 3", 337.49),
            _phase("Phase 4", 393.74),
            _phase("Ruby", 1687.47),
            _phase("Sapphire", 1874.97),
            _phase("Black Pearl", 1124.98, 1383.95),
        ],
    },
]

SUGGESTIONS = [
    {
        "id": "730-000040",
        "marketHashName": "★ Karambit | Doppler (Factory New)",
        "iconUrl": "https://cdn.sandbox.invalid/icons/730/000040.png",
        "rarity": "Covert",
        "rarityColor": "eb4b4b",
        "itemType": "Knife",
    },
    {
        "id": "730-000041",
        "marketHashName": "★ Karambit | Doppler (Minimal Wear)",
        "iconUrl": "https://cdn.sandbox.invalid/icons/730/000041.png",
        "rarity": "Covert",
        "rarityColor": "eb4b4b",
        "itemType": "Knife",
    },
]

TRADE_URL_CHECK = {
    "state": 1,
    "platformid": OWNER_PLATFORM_ID,
    "message": "Normal: the account can trade.",
    "canTrade": True,
    "reason": {"escrowDays": 0, "probation": False},
    "bans": {"antiCheatBanned": False, "gameBans": 0, "economyBan": "none"},
}

# -- Inventories.

INVENTORY_ITEM = {
    "id": "730_64080944511",
    "assetId": "64080944511",
    **REDLINE_FN,
    "offer": {"price": 66.18, "accepted": True},
    "stickers": [],
    "exterior": "Factory New",
    "wear": "0.25",
}

UNPRICED_INVENTORY_ITEM = {
    "id": "730_64081258698",
    "assetId": "64081258698",
    "name": "Sealed Graffiti | Recoil AK-47",
    "marketHashName": "Sealed Graffiti | Recoil AK-47",
    "appid": 730,
    "tradable": False,
    "amount": 1,
    "marketPrice": 0.00,
    "offer": {"price": 0.00, "accepted": False},
    "stickers": [],
}

CLIENT_INVENTORY = {
    "inventory": [INVENTORY_ITEM, UNPRICED_INVENTORY_ITEM],
    "count": 2,
    "updatedAt": "2026-11-23T14:34:58.805Z",
    "collateral": 10.00,
}

SECURE_INVENTORY = {
    "inventory": [
        {**INVENTORY_ITEM, "id": "730_64080952430", "assetId": "64080952430"},
        {**UNPRICED_INVENTORY_ITEM, "id": "730_64081266617", "assetId": "64081266617"},
    ],
    "count": 2,
    "updatedAt": "2026-11-23T14:34:58.791Z",
    "collateral": 0.00,
}

# -- Trades.

_CLIENT_TRADE = {
    "merchantId": MERCHANT_ID,
    "externalClientUserId": "user-8841",
    "clientPlatformID": CLIENT_PLATFORM_ID,
    "clientTradeUrl": CLIENT_TRADE_URL,
}
_SELF_TRADE = {
    "merchantId": MERCHANT_ID,
    "clientPlatformID": OWNER_PLATFORM_ID,
    "clientTradeUrl": OWNER_TRADE_URL,
}

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
    **_CLIENT_TRADE,
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
    **_SELF_TRADE,
    "items": [{**CLIENT_DEPOSIT["items"][0], "id": "730_64080952430"}],
    "preCredit": 66.18,
    "pendingCredit": 0.00,
    "isInstant": False,
    "collateral": {"merchant": 0.00, "provider": 0.00},
    "createdAt": "2026-11-23T14:35:00.042Z",
    "updatedAt": "2026-11-23T14:35:00.042Z",
}
del SELF_SELL["clientUserId"]

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
    **_CLIENT_TRADE,
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
    **_SELF_TRADE,
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
    **_CLIENT_TRADE,
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
    **_SELF_TRADE,
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

DEPOSIT_ERROR_DETAILS = {
    "ITEMS_UNAVAILABLE": {"items": ["730_64080944511"]},
    "ITEMS_NOT_ACCEPTED": {"items": ["730_64081258698"]},
    "DEPOSIT_IN_PROGRESS": {"items": ["730_64080944511"]},
    "ITEM_OVERSTOCKED": {"items": ["730_64080944511"]},
    "PRICE_CHANGED": {"itemId": "730_64080944511", "price": 65.90},
}

WITHDRAW_ERROR_DETAILS = {
    "PRICE_CHANGED": {"itemId": "afb88328-f83e-4237-8f72-477d645cd3cf", "price": 67.12},
}
