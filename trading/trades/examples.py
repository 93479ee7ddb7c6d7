"""The accounts and ids every trading example shares, as the sandbox gives them. One story: a
merchant, its client (platform id ...739, partner 11) and another account (...740, partner 12)
that the merchant's self trades deliver to or take from; each flow's ``examples.py`` tells its
part of it. ``tests/test_openapi_docs.py`` checks every example against its operation's schemas."""

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

# What every trade of the client, or every self trade, shows of its parties.
CLIENT_TRADE = {
    "merchantId": MERCHANT_ID,
    "externalClientUserId": "user-8841",
    "clientPlatformID": CLIENT_PLATFORM_ID,
    "clientTradeUrl": CLIENT_TRADE_URL,
}
SELF_TRADE = {
    "merchantId": MERCHANT_ID,
    "clientPlatformID": OWNER_PLATFORM_ID,
    "clientTradeUrl": OWNER_TRADE_URL,
}
