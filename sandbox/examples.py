"""Example requests and answers of the ``/sandbox/`` helpers in the OpenAPI document: the same
world as the trading and crypto examples. ``tests/test_openapi_docs.py`` checks them against
their operations' schemas."""

from crypto import examples as crypto
from trading.trades.examples import CLIENT_PLATFORM_ID
from trading.withdrawals import examples as withdrawals

PLATFORM_USER_REQUEST = {
    "platformId": CLIENT_PLATFORM_ID,
    "escrowDays": 0,
    "inventory": [
        {"marketHashName": "AK-47 | Redline (Factory New)", "wear": 0.25},
        {"marketHashName": "★ Karambit | Doppler (Factory New)", "phase": "Ruby"},
        {"marketHashName": "Tempered AK47", "game": 252490, "amount": 3},
    ],
}

PLATFORM_USER = {"platformId": CLIENT_PLATFORM_ID, "configured": True}


FLEET_DEGRADED = {
    "status": "degraded",
    "bots": [
        {
            "name": f"Bot {name}",
            "avatar": f"https://cdn.sandbox.invalid/bots/{number}.png",
            "platformId": str(76561199000000000 + number),
            "status": "degraded",
        }
        for number, name in enumerate(("Atlas", "Borealis", "Cosmo"))
    ],
}

TRADE_EVENT_REQUEST = {"event": "purchased"}
TRADE_EVENT_TRADE = withdrawals.SELF_BUY_OFFERED

CLOCK = {"now": "2026-11-23T15:05:59.682Z", "offsetSeconds": 1800}
CLOCK_ADVANCE_REQUEST = {"minutes": 30}

TRANSFER_REQUEST = {
    "chain": "ETH",
    "token": "USDC",
    "address": crypto.ETH_ADDRESS,
    "amount": "40",
    "confirmations": 12,
}

TRANSFER = {
    "txHash": crypto.DEPOSIT_TX,
    "chain": "ETH",
    "confirmations": 12,
    "dropped": False,
    "deposit": crypto.DEPOSIT,
    "withdrawal": None,
}

CONFIRMATIONS_REQUEST = {"confirmations": 12}

CASHOUT_CONFIRMED = {
    "txHash": crypto.CASHOUT_TX,
    "chain": "ETH",
    "confirmations": 12,
    "dropped": False,
    "deposit": None,
    "withdrawal": {
        **crypto.SENT_CASHOUT,
        "status": "completed",
        "updatedAt": "2026-11-23T14:36:12.204Z",
        "completedAt": "2026-11-23T14:36:12.204Z",
    },
}

REORGED = {
    "txHash": crypto.DEPOSIT_TX,
    "chain": "ETH",
    "confirmations": 3,
    "dropped": True,
    "deposit": {
        **crypto.DEPOSIT,
        "status": "failed",
        "updatedAt": "2026-11-23T14:35:02.118Z",
        "completedAt": None,
    },
    "withdrawal": None,
}

CHAIN_REQUEST = {"paused": True}
CHAIN = {"chain": "ETH", "paused": True, "failBroadcasts": False}

VERDICT_REQUEST = {"status": "ACCEPTED"}
VERDICT = {
    "dossierId": "dsr_431c9291ac1d3b8f917540fd",
    "status": "ACCEPTED",
    "startedAt": "2026-11-23T14:35:01.460Z",
    "completedAt": "2026-11-23T14:41:37.498Z",
}

PROVIDER_REQUEST = {"status": "offline"}
PROVIDER = {"status": "offline"}

DEMO_CALLBACK_RECEIVED = [
    {
        "webhookId": "e9b4a736-38ae-4a4f-ac6c-7a5642114b04",
        "type": "trade.initiated",
        "signatureValid": True,
        "receivedAt": "2026-11-23T14:34:59.212Z",
        "payload": {
            "id": "e9b4a736-38ae-4a4f-ac6c-7a5642114b04",
            "type": "trade.initiated",
            "trade": withdrawals.SELF_BUY,
            "sequence": 1,
            "createdAt": "2026-11-23T14:34:59.092Z",
        },
    }
]

AUTOPILOT_REQUEST = {"enabled": False}
AUTOPILOT = {"enabled": False, "stepSeconds": 5}

RESET = {
    "platformUsersForgotten": 1,
    "bots": "online",
    "identityProvider": "online",
    "chains": [
        {"chain": chain, "paused": False, "failBroadcasts": False}
        for chain in ("ETH", "BSC", "SOL")
    ],
    "autopilot": {"enabled": True, "stepSeconds": 5},
}

WEBHOOK_TEST_REQUEST = {"type": "trade.initiated", "url": "https://hooks.example.com/trading"}

WEBHOOK_TEST = {
    "webhookId": "5d7e3c1a-8f2b-4a6e-9c0d-1b2a3c4d5e6f",
    "type": "trade.initiated",
    "url": "https://hooks.example.com/trading",
    "statusCode": 200,
    "answer": '{"action": "approve"}',
    "latencyMs": 41,
    "error": None,
    "payload": {
        "id": "5d7e3c1a-8f2b-4a6e-9c0d-1b2a3c4d5e6f",
        "type": "trade.initiated",
        "createdAt": "2026-11-23T14:35:00.412Z",
        "sequence": 1,
        "trade": withdrawals.CLIENT_WITHDRAWAL,
        "test": True,
    },
}
