from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from merchants.permissions import ANY_SCOPE
from merchants.views import MerchantApiView
from wallet.representations import WalletBalance
from wallet.selectors import wallet_balance_summary


class WalletBalanceApi(MerchantApiView):
    """Either scope reads the balance: it is part of trading and of the ledger."""

    operation = "wallet.balance"
    required_scope = ANY_SCOPE

    @extend_schema(operation_id="getWalletBalance", tags=["wallet"], responses=WalletBalance)
    def get(self, request: Request) -> Response:
        return Response(wallet_balance_summary(merchant=self.merchant(request)))
