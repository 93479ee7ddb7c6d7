"""Example answers of the inventory and trade-URL check operations in the OpenAPI document, in
the story of ``trading.trades.examples``."""

from trading.market.examples import REDLINE_FN
from trading.trades.examples import OWNER_PLATFORM_ID

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
