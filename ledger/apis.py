"""The funding ledger (contract 4.12) and its single lookup (decisions section 6)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core.errors import DomainError
from ledger.models import Funding
from ledger.representations import ledger_page_json, ledger_transaction_json
from ledger.selectors import LedgerQuery, ledger_page, ledger_transaction_get
from ledger.serializers import LedgerPageOut, LedgerQueryIn, LedgerTransactionOut
from merchants.models import Scope
from merchants.views import MerchantApiView

_MOMENT = "ISO 8601 date (midnight UTC at the start of that day) or date-time"

LEDGER_PARAMETERS = [
    OpenApiParameter(
        "type",
        str,
        enum=Funding.Type.values,
        description="DEPOSIT and WITHDRAWAL also leave out admin rows; the others keep them",
    ),
    OpenApiParameter(
        "status", str, enum=Funding.Status.values, description="admin rows are not filtered"
    ),
    OpenApiParameter("startDate", str, description=f"{_MOMENT}; created at or after"),
    OpenApiParameter("endDate", str, description=f"{_MOMENT}; created at or before"),
    OpenApiParameter("limit", int, description="1-100, default 50"),
    OpenApiParameter("offset", int, description="rows to skip, default 0"),
]


class LedgerTransactionsApi(MerchantApiView):
    operation = "ledger.transactions"
    required_scope = Scope.LEDGER_READ
    errors = ("SERVER_ERROR",)

    @extend_schema(
        operation_id="listLedgerTransactions",
        tags=["ledger"],
        parameters=LEDGER_PARAMETERS,
        responses=LedgerPageOut,
    )
    def get(self, request: Request) -> Response:
        query = parse(LedgerQueryIn, request.query_params)
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
        return Response(ledger_page_json(page))


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
        return Response(ledger_transaction_json(row))
