"""The funding ledger (contract 4.12) and its single lookup (decisions section 6)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from core.errors import DomainError
from ledger import examples
from ledger.representations import LedgerPageOut, LedgerTransactionOut
from ledger.selectors import LedgerQuery, ledger_page_rendered, ledger_transaction_get
from ledger.serializers import LedgerQueryIn
from merchants.models import Scope
from merchants.ratelimits import LEDGER, Limited
from merchants.views import MerchantApiView


class LedgerTransactionsApi(MerchantApiView):
    rate_limit = Limited("ledger.transactions", LEDGER, shared="ledger")
    required_scope = Scope.LEDGER_READ
    query_serializer = LedgerQueryIn
    errors = ("SERVER_ERROR",)
    doc = OperationDoc(
        summary="List your wallet's fundings",
        description="""
            The money that entered or left your wallet from outside trading, newest first:
            crypto deposits (`DEPOSIT`), cashouts (`WITHDRAWAL`) and their refunds (`REFUND`),
            transfers between merchants by staff (`INTERNAL_TRANSFER`, negative on the sending
            side), and staff credits and debits (`ADMIN_CREDIT`, `ADMIN_DEBIT`: always
            `POSTED`, with `amount.crypto` "0" and no chain). Trade settlements are not
            listed: read the trades for those. `INITIATED` fundings older than 24 hours are
            left out.

            Filter by `type` (`DEPOSIT` or `WITHDRAWAL` also leave out staff rows,
            `REFUND` and `INTERNAL_TRANSFER` keep them, `ADMIN_CREDIT` or `ADMIN_DEBIT` lists
            only those staff rows), `status` (staff rows are not filtered by it), and
            `startDate`/`endDate`
            (ISO 8601 date or date-time, both ends included; a date means midnight UTC at the
            start of that day, so pass a date-time to include a whole end day). Page with
            `limit` (1-100) and `offset`; `pagination.total` counts every matching row.

            A history that cannot be read in time answers `SERVER_ERROR` (HTTP 400): retry.
        """,
        parameters={"startDate": "2026-11-01", "limit": "50"},
        response=examples.LEDGER_PAGE,
    )

    @extend_schema(operation_id="listLedgerTransactions", tags=["ledger"], responses=LedgerPageOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        page = ledger_page_rendered(
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
    rate_limit = Limited("ledger.transaction", LEDGER, shared="ledger")
    required_scope = Scope.LEDGER_READ
    errors = ("TRANSACTION_NOT_FOUND", "SERVER_ERROR")
    doc = OperationDoc(
        summary="Get one funding",
        description="""
            One funding of your wallet by its id (the `id` of a ledger row of any type but the
            staff rows `ADMIN_CREDIT` and `ADMIN_DEBIT`, which cannot be looked up), as the list
            shows it, plus `timestamps.expired`: when an `INITIATED` funding leaves the list (24
            hours after it was created), null for any other status. An `INITIATED` funding
            already left out of the list is still found here. Another merchant's funding, a
            staff row's id or an unknown id answer `TRANSACTION_NOT_FOUND`.
        """,
        parameters={"transactionId": examples.CASHOUT_FUNDING["id"]},
        response=examples.LEDGER_TRANSACTION,
    )

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
