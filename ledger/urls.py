from django.urls import path

from ledger.apis import LedgerTransactionApi, LedgerTransactionsApi

urlpatterns = [
    path("v1/ledger/transactions", LedgerTransactionsApi.as_view()),
    path("v1/ledger/transactions/<str:transactionId>", LedgerTransactionApi.as_view()),
]
