from django.urls import path

from trading.accounts.apis import CheckTradeUrlApi, ClientInventoryApi, SecureInventoryApi
from trading.deposits.apis import ClientDepositApi, SecureSellApi
from trading.history.apis import ClientTradeApi, ClientTradesApi, SecureTradeApi, SecureTradesApi
from trading.market.apis import (
    ClientMarketApi,
    ClientMarketItemApi,
    ClientSuggestionsApi,
    PricesApi,
    SecureMarketApi,
    SecureMarketItemApi,
)
from trading.withdrawals.apis.cancels import (
    ClientWithdrawCancelApi,
    ClientWithdrawItemCancelApi,
    SecureBuyCancelApi,
    SecureBuyItemCancelApi,
)
from trading.withdrawals.apis.withdraw import (
    ClientQuickWithdrawApi,
    ClientWithdrawApi,
    SecureBuyApi,
    SecureQuickBuyApi,
)

urlpatterns = [
    path("secure/prices", PricesApi.as_view()),
    path("secure/market", SecureMarketApi.as_view()),
    path("secure/market/item", SecureMarketItemApi.as_view()),
    path("secure/check-tradeurl", CheckTradeUrlApi.as_view()),
    path("secure/inventory", SecureInventoryApi.as_view()),
    path("client/market", ClientMarketApi.as_view()),
    path("client/market/item", ClientMarketItemApi.as_view()),
    path("client/market/suggestions", ClientSuggestionsApi.as_view()),
    path("client/inventory", ClientInventoryApi.as_view()),
    path("secure/sell", SecureSellApi.as_view()),
    path("client/trading/deposit", ClientDepositApi.as_view()),
    path("secure/buy", SecureBuyApi.as_view()),
    path("secure/buy/quick", SecureQuickBuyApi.as_view()),
    path("secure/buy/<str:tradeId>/cancel", SecureBuyCancelApi.as_view()),
    path("secure/buy/<str:tradeId>/items/<str:itemId>/cancel", SecureBuyItemCancelApi.as_view()),
    path("client/trading/withdraw", ClientWithdrawApi.as_view()),
    path("client/trading/withdraw/quick", ClientQuickWithdrawApi.as_view()),
    path("client/trading/withdraw/<str:tradeId>/cancel", ClientWithdrawCancelApi.as_view()),
    path(
        "client/trading/withdraw/<str:tradeId>/items/<str:itemId>/cancel",
        ClientWithdrawItemCancelApi.as_view(),
    ),
    path("secure/trades", SecureTradesApi.as_view()),
    path("secure/trades/<str:tradeId>", SecureTradeApi.as_view()),
    path("client/trades", ClientTradesApi.as_view()),
    path("client/trades/<str:id>", ClientTradeApi.as_view()),
]
