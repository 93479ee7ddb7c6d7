from django.conf import settings
from django.urls import path

from crypto.apis import (
    ClientDepositAddressApi,
    ClientDepositsApi,
    ClientWithdrawalsApi,
    ClientWithdrawApi,
    SandboxCryptoChainApi,
    SandboxCryptoConfirmationsApi,
    SandboxCryptoReorgApi,
    SandboxCryptoTransfersApi,
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

if settings.SANDBOX:
    urlpatterns += [
        path("sandbox/crypto/transfers", SandboxCryptoTransfersApi.as_view()),
        path(
            "sandbox/crypto/transfers/<str:txHash>/confirmations",
            SandboxCryptoConfirmationsApi.as_view(),
        ),
        path("sandbox/crypto/transfers/<str:txHash>/reorg", SandboxCryptoReorgApi.as_view()),
        path("sandbox/crypto/chains/<str:chain>", SandboxCryptoChainApi.as_view()),
    ]
