from django.urls import path

from crypto.apis import (
    ClientDepositAddressApi,
    ClientDepositsApi,
    ClientWithdrawalsApi,
    ClientWithdrawApi,
    SecureDepositAddressApi,
    SecureDepositsApi,
    SecureWithdrawalsApi,
    SecureWithdrawApi,
)

urlpatterns = [
    path("client/crypto/deposit-address", ClientDepositAddressApi.as_view()),
    path("secure/crypto/deposit-address", SecureDepositAddressApi.as_view()),
    path("client/crypto/deposits", ClientDepositsApi.as_view()),
    path("secure/crypto/deposits", SecureDepositsApi.as_view()),
    path("client/crypto/withdraw", ClientWithdrawApi.as_view()),
    path("secure/crypto/withdraw", SecureWithdrawApi.as_view()),
    path("client/crypto/withdrawals", ClientWithdrawalsApi.as_view()),
    path("secure/crypto/withdrawals", SecureWithdrawalsApi.as_view()),
]
