"""Example answers of the ledger operations in the OpenAPI document, as the sandbox's crypto
deposits and cashouts and a staff credit make them. ``tests/test_openapi_docs.py`` checks them
against their operations' schemas."""

from typing import Any

CASHOUT_FUNDING: dict[str, Any] = {
    "id": "057df6a3-6cf7-44fd-a0cb-fcfadbc2085c",
    "type": "WITHDRAWAL",
    "status": "PENDING",
    "amount": {
        "usd": 25.00,
        "crypto": "20.000000",
        "token": "USDC",
        "chain": "ETH",
        "exchangeRate": "1.00",
    },
    "fee": 5.00,
    "address": "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
    "txnHash": "0x90269e8fe6269e35feb0b89f78597959f650b2979796163de7150eb0d09ba268",
    "timestamps": {
        "created": "2026-11-23T14:35:00.631Z",
        "completed": None,
        "updated": "2026-11-23T14:35:00.827Z",
    },
}

DEPOSIT_FUNDING = {
    "id": "eb2209ec-b3e6-4d32-a4f5-4d751733e3f2",
    "type": "DEPOSIT",
    "status": "COMPLETED",
    "amount": {
        "usd": 40.00,
        "crypto": "40.000000",
        "token": "USDC",
        "chain": "ETH",
        "exchangeRate": "1.00",
    },
    "fee": 0.00,
    "address": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "txnHash": "0xbcbd2c10d1c7780f945ae82c1a21a9ff1858c9810939d7d4f50d472a3267c338",
    "timestamps": {
        "created": "2026-11-23T14:35:00.445Z",
        "completed": "2026-11-23T14:35:00.471Z",
        "updated": "2026-11-23T14:35:00.471Z",
    },
}

ADMIN_CREDIT = {
    "id": "f3e0333d-af12-4295-9e64-70848e17c1c0",
    "type": "ADMIN_CREDIT",
    "status": "POSTED",
    "amount": {
        "usd": 5000.00,
        "crypto": "0",
        "token": None,
        "chain": None,
        "exchangeRate": None,
    },
    "fee": 0.00,
    "address": None,
    "txnHash": None,
    "timestamps": {
        "created": "2026-11-23T14:35:00.309Z",
        "completed": "2026-11-23T14:35:00.309Z",
        "updated": "2026-11-23T14:35:00.309Z",
    },
}

LEDGER_PAGE = {
    "items": [CASHOUT_FUNDING, DEPOSIT_FUNDING, ADMIN_CREDIT],
    "pagination": {"page": 1, "limit": 50, "total": 3, "totalPages": 1},
}

LEDGER_TRANSACTION = {
    **CASHOUT_FUNDING,
    "timestamps": {**CASHOUT_FUNDING["timestamps"], "expired": None},
}
