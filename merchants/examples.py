"""Example requests and answers of the merchant operations in the OpenAPI document (the same
merchant and client as ``trading.trades.examples``; a webhook event carries a trade as they show
it).
``tests/test_openapi_docs.py`` checks them against their operations' schemas."""

MERCHANT_ID = "27849d0a-2716-47c8-b3b6-516042937f83"
CLIENT_PLATFORM_ID = "76561197960265739"
CLIENT_TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner=11&token=kT9x_2Qa"

AUTHENTICATE_CLIENT_REQUEST = {
    "clientPlatformId": CLIENT_PLATFORM_ID,
    "clientTradeUrl": CLIENT_TRADE_URL,
    "clientId": "user-8841",
    "clientData": {
        "totalWager": 1520.50,
        "kycLevel": 2,
        "fiatDeposits": True,
        "cryptoDeposits": False,
        "registrationDate": "2024-03-02T10:15:00.000Z",
        "kycHash": "9f2c4e7a1b3d5f60",
    },
}

# Signed with a sandbox merchant's API secret for the request above; valid 24 hours.
CLIENT_TOKEN = {
    "token": (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsInVzZXJJZCI6IjI3ODQ5ZDBhLTI3MTYtNDdjOC1iM2I2LTUx"
        "NjA0MjkzN2Y4MyJ9.eyJtZXJjaGFudElkIjoiMjc4NDlkMGEtMjcxNi00N2M4LWIzYjYtNTE2MDQyOTM3Zjgz"
        "IiwiY2xpZW50Ijp7InBsYXRmb3JtSUQiOiI3NjU2MTE5Nzk2MDI2NTczOSIsInRyYWRlVXJsIjoiaHR0cHM6"
        "Ly9zdGVhbWNvbW11bml0eS5jb20vdHJhZGVvZmZlci9uZXcvP3BhcnRuZXI9MTEmdG9rZW49a1Q5eF8yUWEi"
        "LCJjbGllbnRJZCI6InVzZXItODg0MSIsImNsaWVudERhdGEiOnsidG90YWxXYWdlciI6MTUyMC41LCJreWNM"
        "ZXZlbCI6MiwiZmlhdERlcG9zaXRzIjp0cnVlLCJjcnlwdG9EZXBvc2l0cyI6ZmFsc2UsInJlZ2lzdHJhdGlv"
        "bkRhdGUiOiIyMDI0LTAzLTAyVDEwOjE1OjAwLjAwMFoiLCJreWNIYXNoIjoiOWYyYzRlN2ExYjNkNWY2MCJ9"
        "fSwiaWF0IjoxNzk1NDQ0NDk4LCJleHAiOjE3OTU1MzA4OTh9.kthPheS8xCpJiuNMw1aXU-SQt99pGEFhhndx"
        "7Q07rAs"
    )
}

_TRADE_ITEM = {
    "id": "afb88328-f83e-4237-8f72-477d645cd3cf",
    "name": "AK-47 | Redline",
    "type": "Rifle",
    "appid": 730,
    "offer": {"price": 66.69, "delivery": "standard"},
    "amount": 1,
    "status": "pending",
    "iconUrl": "https://cdn.sandbox.invalid/icons/730/000000.png",
    "tradable": True,
    "externalId": "line-1",
    "marketHashName": "AK-47 | Redline (Factory New)",
}

_TRADE = {
    "id": "7b4a1eb1-27de-4045-9bc2-95c264fda5af",
    "game": "730",
    "type": "withdraw",
    "items": [_TRADE_ITEM],
    "source": "self",
    "status": "pending",
    "createdAt": "2026-11-23T14:34:59.076Z",
    "updatedAt": "2026-11-23T14:35:01.869Z",
    "merchantId": MERCHANT_ID,
    "externalId": "buy-2026-11-23-0001",
    "totalPrice": 66.69,
    "clientTradeUrl": "https://steamcommunity.com/tradeoffer/new/?partner=12&token=Rb7m-4Lp",
    "clientPlatformID": "76561197960265740",
}

FAILED_EVENT = {
    "id": "6a0be117-9bd1-4249-a0ed-047ba09e2a8e",
    "type": "trade.pending",
    "status": "failed",
    "attempts": 14,
    "createdAt": "2026-11-23T14:35:01.885Z",
    "deliveredAt": None,
    "nextAttemptAt": None,
    "lastError": "HTTP 503",
    "payload": {
        "id": "6a0be117-9bd1-4249-a0ed-047ba09e2a8e",
        "type": "trade.pending",
        "trade": _TRADE,
        "sequence": 2,
        "createdAt": "2026-11-23T14:35:01.885Z",
    },
}

WEBHOOK_EVENTS = {"events": [FAILED_EVENT]}

RESENT_EVENT = {
    **FAILED_EVENT,
    "status": "pending",
    "attempts": 0,
    "nextAttemptAt": "2026-11-26T16:02:11.508Z",
    "lastError": "",
}
