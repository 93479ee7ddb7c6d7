from django.urls import path

from wallet.apis import WalletBalanceApi

urlpatterns = [path("v1/wallets/me/balance", WalletBalanceApi.as_view())]
