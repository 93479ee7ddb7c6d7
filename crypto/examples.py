"""Example requests and answers of the crypto operations in the OpenAPI document, as the sandbox
chains give them (testnet networks, addresses derived from the development mnemonic).
``tests/test_openapi_docs.py`` checks them against their operations' schemas."""

PLATFORM_ID = "76561197960265739"
ETH_ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"
DEPOSIT_TX = "0xbcbd2c10d1c7780f945ae82c1a21a9ff1858c9810939d7d4f50d472a3267c338"
CASHOUT_TX = "0x90269e8fe6269e35feb0b89f78597959f650b2979796163de7150eb0d09ba268"

ETH_DEPOSIT_ADDRESS = {
    "platformId": PLATFORM_ID,
    "chain": "ETH",
    "network": "ethereum-sepolia",
    "testnet": True,
    "status": "active",
    "address": ETH_ADDRESS,
    "tokenAccount": None,
    "tokens": [
        {
            "token": "USDT",
            "contract": "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0",
            "decimals": 6,
        },
        {
            "token": "USDC",
            "contract": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
            "decimals": 6,
        },
    ],
    "minDepositCents": 1000,
    "minConfirmations": 12,
    "explorerUrl": f"https://sepolia.etherscan.io/address/{ETH_ADDRESS}",
}

# Asked on Solana for the first time: the token account is being opened; ask again.
SOL_DEPOSIT_ADDRESS_PENDING = {
    "platformId": PLATFORM_ID,
    "chain": "SOL",
    "network": "solana-devnet",
    "testnet": True,
    "status": "pending",
    "address": None,
    "tokenAccount": None,
    "tokens": [],
    "minDepositCents": 100,
    "minConfirmations": 32,
    "explorerUrl": None,
}

DEPOSIT = {
    "id": "bbd3e82f-149c-460d-a39e-568b872f33d6",
    "type": "crypto_deposit",
    "status": "completed",
    "platformId": PLATFORM_ID,
    "chain": "ETH",
    "token": "USDC",
    "amount": "40.00",
    "amountCents": 4000,
    "cryptoAmount": "40",
    "address": ETH_ADDRESS,
    "txHash": DEPOSIT_TX,
    "from": "0xA58567EBF1F0FDe3206440B7e2AD38de0B45E05F",
    "createdAt": "2026-11-23T14:35:00.445Z",
    "updatedAt": "2026-11-23T14:35:00.471Z",
    "completedAt": "2026-11-23T14:35:00.471Z",
}

DEPOSIT_PAGE = {"deposits": [DEPOSIT], "nextBefore": None}

CASHOUT_REQUEST = {
    "chain": "ETH",
    "token": "USDC",
    "address": RECIPIENT,
    "amountCents": 2500,
    "requestId": "cash-2026-11-23-0002",
}

SECURE_CASHOUT_REQUEST = {**CASHOUT_REQUEST, "platformId": PLATFORM_ID}

_CASHOUT = {
    "id": "67f3ec6d-25cf-4d8a-96ba-5917ae73068b",
    "type": "crypto_withdraw",
    "platformId": PLATFORM_ID,
    "chain": "ETH",
    "token": "USDC",
    "amount": "25.00",
    "amountCents": 2500,
    "feeCents": 500,
    "receiveCents": 2000,
    "cryptoAmount": "20.000000",
    "address": RECIPIENT,
    "txHash": None,
    "reason": None,
    "createdAt": "2026-11-23T14:35:00.631Z",
    "updatedAt": "2026-11-23T14:35:00.631Z",
    "completedAt": None,
}

# A client cashout waits for the approval callback; a self cashout is approved at once.
CLIENT_CASHOUT = {**_CASHOUT, "status": "awaiting_approval"}
SELF_CASHOUT = {**_CASHOUT, "status": "approved", "updatedAt": "2026-11-23T14:35:00.646Z"}

SENT_CASHOUT = {
    **_CASHOUT,
    "status": "sent",
    "txHash": CASHOUT_TX,
    "updatedAt": "2026-11-23T14:35:00.826Z",
}

WITHDRAWAL_PAGE = {"withdrawals": [SENT_CASHOUT], "nextBefore": None}
