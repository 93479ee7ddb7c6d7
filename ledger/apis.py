"""The funding ledger (contract 4.12) and its single lookup (decisions section 6)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import DomainError
from ledger.representations import LedgerPageOut, LedgerTransactionOut
from ledger.selectors import LedgerQuery, ledger_page, ledger_transaction_get
from ledger.serializers import LedgerQueryIn
from merchants.models import Scope
from merchants.views import MerchantApiView


class LedgerTransactionsApi(MerchantApiView):
    operation = "ledger.transactions"
    required_scope = Scope.LEDGER_READ
    query_serializer = LedgerQueryIn
    errors = ("SERVER_ERROR",)

    @extend_schema(operation_id="listLedgerTransactions", tags=["ledger"], responses=LedgerPageOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        page = ledger_page(
            merchant=self.merchant(request),
            query=LedgerQuery(
                type=query.get("type"),
                status=query.get("status"),
                start=query.get("startDate"),
                end=query.get("endDate"),
                limit=query["limit"],
                offset=query["offset"],
            ),
        )
        return Response(page)


class LedgerTransactionApi(MerchantApiView):
    operation = "ledger.transaction"
    required_scope = Scope.LEDGER_READ
    errors = ("TRANSACTION_NOT_FOUND", "SERVER_ERROR")

    @extend_schema(
        operation_id="getLedgerTransaction",
        tags=["ledger"],
        parameters=[
            OpenApiParameter(
                "transactionId", str, OpenApiParameter.PATH, description="a funding id"
            )
        ],
        responses=LedgerTransactionOut,
    )
    def get(self, request: Request, transactionId: str) -> Response:  # noqa: N803 (the contract's name)
        row = ledger_transaction_get(merchant=self.merchant(request), transaction_id=transactionId)
        if row is None:
            raise DomainError("TRANSACTION_NOT_FOUND")
        return Response(row)
