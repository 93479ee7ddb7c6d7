"""Crypto endpoints: deposit addresses, deposit history, cashouts and their history (client
token and API key pairs)."""

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from crypto.models import CryptoWithdrawal
from crypto.representations import (
    DepositAddressOut,
    DepositPageOut,
    WithdrawalOut,
    WithdrawalPageOut,
    deposit_address_json,
    deposit_page_json,
    withdrawal_json,
    withdrawal_page_json,
)
from crypto.selectors import crypto_deposits_page, crypto_withdrawals_page
from crypto.serializers import (
    CashoutIn,
    DepositAddressQueryIn,
    HistoryQueryIn,
    SecureCashoutIn,
    SecureDepositAddressQueryIn,
    SecureHistoryQueryIn,
)
from crypto.services.addresses import deposit_address_get
from crypto.services.withdrawals import CashoutIn as Cashout
from crypto.services.withdrawals import crypto_withdrawal_create
from merchants.views import CallerApiView, ClientApiView, MerchantApiView

ACCESS_ERRORS = ("ONCHAIN_DISABLED", "ONCHAIN_MERCHANT_NOT_VERIFIED")


class UserApi(CallerApiView):
    """Whose crypto an operation is about: the query's or body's ``platformId`` on a merchant
    route (``MerchantUserApi``), the token's own account on a client route (``ClientUserApi``).
    """

    source: ClassVar[str]

    def platform_id(self, request: Request, data: dict[str, Any]) -> str:
        raise NotImplementedError


class MerchantUserApi(MerchantApiView, UserApi):
    source = CryptoWithdrawal.Source.SELF

    def platform_id(self, request: Request, data: dict[str, Any]) -> str:
        platform_id: str = data["platformId"]
        return platform_id


class ClientUserApi(ClientApiView, UserApi):
    source = CryptoWithdrawal.Source.CLIENT

    def platform_id(self, request: Request, data: dict[str, Any]) -> str:
        return self.caller(request).platform_id


class DepositAddressApi(UserApi):
    """The user's deposit address on a chain: ``GET /secure/crypto/deposit-address`` and
    ``GET /client/crypto/deposit-address``."""

    query_serializer = DepositAddressQueryIn
    errors = (*ACCESS_ERRORS, "ONCHAIN_ADDRESS_CAPACITY")

    @extend_schema(
        tags=["crypto"],
        responses=DepositAddressOut,
        summary="The user's deposit address on a chain (Solana: per token, opened on request; "
        "poll until active).",
    )
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        found = deposit_address_get(
            merchant=self.merchant(request),
            platform_id=self.platform_id(request, query),
            chain=query["chain"],
            token=query["token"],
        )
        return Response(deposit_address_json(found))


class SecureDepositAddressApi(MerchantUserApi, DepositAddressApi):
    operation = "secure.crypto.deposit_address"
    operation_id = "secureCryptoDepositAddress"
    query_serializer = SecureDepositAddressQueryIn


class ClientDepositAddressApi(ClientUserApi, DepositAddressApi):
    operation = "client.crypto.deposit_address"
    operation_id = "clientCryptoDepositAddress"


class DepositsApi(UserApi):
    """The user's crypto deposits, newest first: ``GET /secure/crypto/deposits`` and
    ``GET /client/crypto/deposits``."""

    query_serializer = HistoryQueryIn

    @extend_schema(tags=["crypto"], responses=DepositPageOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        rows, next_before = crypto_deposits_page(
            merchant=self.merchant(request),
            platform_id=self.platform_id(request, query),
            before=query.get("before"),
            limit=query["limit"],
        )
        return Response(deposit_page_json(rows, next_before))


class SecureDepositsApi(MerchantUserApi, DepositsApi):
    operation = "secure.crypto.deposits"
    operation_id = "secureCryptoDeposits"
    query_serializer = SecureHistoryQueryIn


class ClientDepositsApi(ClientUserApi, DepositsApi):
    operation = "client.crypto.deposits"
    operation_id = "clientCryptoDeposits"


class WithdrawalsApi(UserApi):
    """The user's cashouts, newest first: ``GET /secure/crypto/withdrawals`` and
    ``GET /client/crypto/withdrawals``."""

    query_serializer = HistoryQueryIn

    @extend_schema(tags=["crypto"], responses=WithdrawalPageOut)
    def get(self, request: Request) -> Response:
        query = self.parse_query(request)
        rows, next_before = crypto_withdrawals_page(
            merchant=self.merchant(request),
            platform_id=self.platform_id(request, query),
            before=query.get("before"),
            limit=query["limit"],
        )
        return Response(withdrawal_page_json(rows, next_before))


class SecureWithdrawalsApi(MerchantUserApi, WithdrawalsApi):
    operation = "secure.crypto.withdrawals"
    operation_id = "secureCryptoWithdrawals"
    query_serializer = SecureHistoryQueryIn


class ClientWithdrawalsApi(ClientUserApi, WithdrawalsApi):
    operation = "client.crypto.withdrawals"
    operation_id = "clientCryptoWithdrawals"


class CashoutApi(UserApi):
    """A cashout of the merchant's balance to an address, for a user: ``POST
    /secure/crypto/withdraw`` and ``POST /client/crypto/withdraw``."""

    errors: ClassVar[tuple[str, ...]] = (
        *ACCESS_ERRORS,
        "INSUFFICIENT_BALANCE",
        "ONCHAIN_WITHDRAW_INVALID_ADDRESS",
        "ONCHAIN_WITHDRAW_BELOW_MIN",
        "TRANSACTION_CONFLICT",
    )

    @extend_schema(
        tags=["crypto"],
        responses=WithdrawalOut,
        summary="Cash out to an address; the same requestId again answers the first cashout.",
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        withdrawal, _ = crypto_withdrawal_create(
            merchant=self.merchant(request),
            platform_id=self.platform_id(request, body),
            source=self.source,
            request=Cashout(
                chain=body["chain"],
                token=body["token"],
                address=body["address"],
                amount_cents=body["amountCents"],
                request_id=body["requestId"],
            ),
        )
        # 200 as every create of the API answers, for the new cashout and for a repeat alike.
        return Response(withdrawal_json(withdrawal))


class SecureWithdrawApi(MerchantUserApi, CashoutApi):
    operation = "secure.crypto.withdraw"
    operation_id = "secureCryptoWithdraw"
    body_serializer = SecureCashoutIn


class ClientWithdrawApi(ClientUserApi, CashoutApi):
    operation = "client.crypto.withdraw"
    operation_id = "clientCryptoWithdraw"
    body_serializer = CashoutIn
    errors = (*CashoutApi.errors, "MERCHANT_NO_CALLBACK_URL")
