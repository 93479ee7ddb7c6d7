from django.urls import path

from crypto.apis import (
    ClientCryptoDepositAddressApi,
    ClientCryptoDepositsApi,
    ClientCryptoWithdrawalsApi,
    ClientCryptoWithdrawApi,
    SecureCryptoDepositAddressApi,
    SecureCryptoDepositsApi,
    SecureCryptoWithdrawalsApi,
    SecureCryptoWithdrawApi,
)

urlpatterns = [
    path("client/crypto/deposit-address", ClientCryptoDepositAddressApi.as_view()),
    path("secure/crypto/deposit-address", SecureCryptoDepositAddressApi.as_view()),
    path("client/crypto/deposits", ClientCryptoDepositsApi.as_view()),
    path("secure/crypto/deposits", SecureCryptoDepositsApi.as_view()),
    path("client/crypto/withdraw", ClientCryptoWithdrawApi.as_view()),
    path("secure/crypto/withdraw", SecureCryptoWithdrawApi.as_view()),
    path("client/crypto/withdrawals", ClientCryptoWithdrawalsApi.as_view()),
    path("secure/crypto/withdrawals", SecureCryptoWithdrawalsApi.as_view()),
]
