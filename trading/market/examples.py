"""Example requests and answers of the catalog and market operations in the OpenAPI document,
as the sandbox gives them: its catalog (``730-000000`` AK-47 | Redline (Factory New), ...), its
listings and bots, in the story of ``trading.trades.examples``."""

from typing import Any

from trading.trades.examples import BOT

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
