from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.permissions import ANY_SCOPE
from merchants.ratelimits import SECURE_TRADES, Limited
from merchants.views import MerchantApiView
from wallet.representations import WalletBalance
from wallet.selectors import wallet_balance_summary


class WalletBalanceApi(MerchantApiView):
    """Either scope reads the balance: it is part of trading and of the ledger."""

    rate_limit = Limited("wallet.balance", SECURE_TRADES)
    required_scope = ANY_SCOPE
    doc = OperationDoc(
        summary="Get your wallet balance",
        description="""
            Your USD wallet: `balance` is what you can spend now (withdrawals and cashouts lock
            from it); `pendingBalance` is locked by withdrawals and cashouts in flight, spent
            when they settle and back in `balance` when they fail or are refunded;
            `escrowBalance` is the value of standard deposits still in their hold, moved to
            `balance` when the hold ends. A reversal of a self sell can leave `balance`
            negative; new withdrawals are then refused with `MERCHANT_BALANCE_LOW`.
        """,
        response={
            "balance": 4990.00,
            "pendingBalance": 50.00,
            "escrowBalance": 66.18,
            "currency": "USD",
        },
    )

    @extend_schema(operation_id="getWalletBalance", tags=["wallet"], responses=WalletBalance)
    def get(self, request: Request) -> Response:
        return Response(wallet_balance_summary(merchant=self.merchant(request)))
