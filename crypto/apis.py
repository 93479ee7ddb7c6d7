"""Crypto endpoints: deposit addresses, deposit history, cashouts and their history (client
token and API key pairs)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from crypto.apischema import (
    DepositAddressOut,
    DepositPageOut,
    WithdrawalOut,
    WithdrawalPageOut,
)
from crypto.models import CryptoWithdrawal
from crypto.representations import deposit_address_json, deposit_json, withdrawal_json
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
from merchants.models import Merchant
from merchants.views import ClientApiView, MerchantApiView

ACCESS_ERRORS = ("ONCHAIN_DISABLED", "ONCHAIN_MERCHANT_NOT_VERIFIED")
ADDRESS_ERRORS = (*ACCESS_ERRORS, "ONCHAIN_ADDRESS_CAPACITY")
CASHOUT_ERRORS = (
    *ACCESS_ERRORS,
    "INSUFFICIENT_BALANCE",
    "ONCHAIN_WITHDRAW_INVALID_ADDRESS",
    "ONCHAIN_WITHDRAW_BELOW_MIN",
    "TRANSACTION_CONFLICT",
)


def _address(merchant: Merchant, platform_id: str, query: dict[str, Any]) -> Response:
    found = deposit_address_get(
        merchant=merchant, platform_id=platform_id, chain=query["chain"], token=query["token"]
    )
    return Response(deposit_address_json(found))


class ClientDepositAddressApi(ClientApiView):
    operation = "client.crypto.deposit_address"
    errors = ADDRESS_ERRORS

    @extend_schema(
        operation_id="clientCryptoDepositAddress",
        tags=["crypto"],
        parameters=[DepositAddressQueryIn],
        responses=DepositAddressOut,
        summary="The token's own deposit address on a chain (Solana: per token, opened on "
        "request; poll until active).",
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request)
        query = parse(DepositAddressQueryIn, request.query_params)
        return _address(caller.merchant, caller.platform_id, query)


class SecureDepositAddressApi(MerchantApiView):
    operation = "secure.crypto.deposit_address"
    errors = ADDRESS_ERRORS

    @extend_schema(
        operation_id="secureCryptoDepositAddress",
        tags=["crypto"],
        parameters=[SecureDepositAddressQueryIn],
        responses=DepositAddressOut,
    )
    def get(self, request: Request) -> Response:
        query = parse(SecureDepositAddressQueryIn, request.query_params)
        return _address(self.merchant(request), query["platformId"], query)


def _deposits(merchant: Merchant, platform_id: str, query: dict[str, Any]) -> Response:
    rows, next_before = crypto_deposits_page(
        merchant=merchant, platform_id=platform_id, before=query.get("before"), limit=query["limit"]
    )
    return Response({"deposits": [deposit_json(row) for row in rows], "nextBefore": next_before})


class SecureDepositsApi(MerchantApiView):
    operation = "secure.crypto.deposits"

    @extend_schema(
        operation_id="secureCryptoDeposits",
        tags=["crypto"],
        parameters=[SecureHistoryQueryIn],
        responses=DepositPageOut,
    )
    def get(self, request: Request) -> Response:
        query = parse(SecureHistoryQueryIn, request.query_params)
        return _deposits(self.merchant(request), query["platformId"], query)


class ClientDepositsApi(ClientApiView):
    operation = "client.crypto.deposits"

    @extend_schema(
        operation_id="clientCryptoDeposits",
        tags=["crypto"],
        parameters=[HistoryQueryIn],
        responses=DepositPageOut,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request)
        query = parse(HistoryQueryIn, request.query_params)
        return _deposits(caller.merchant, caller.platform_id, query)


def _withdrawals(merchant: Merchant, platform_id: str, query: dict[str, Any]) -> Response:
    rows, next_before = crypto_withdrawals_page(
        merchant=merchant, platform_id=platform_id, before=query.get("before"), limit=query["limit"]
    )
    return Response(
        {"withdrawals": [withdrawal_json(row) for row in rows], "nextBefore": next_before}
    )


class SecureWithdrawalsApi(MerchantApiView):
    operation = "secure.crypto.withdrawals"

    @extend_schema(
        operation_id="secureCryptoWithdrawals",
        tags=["crypto"],
        parameters=[SecureHistoryQueryIn],
        responses=WithdrawalPageOut,
    )
    def get(self, request: Request) -> Response:
        query = parse(SecureHistoryQueryIn, request.query_params)
        return _withdrawals(self.merchant(request), query["platformId"], query)


class ClientWithdrawalsApi(ClientApiView):
    operation = "client.crypto.withdrawals"

    @extend_schema(
        operation_id="clientCryptoWithdrawals",
        tags=["crypto"],
        parameters=[HistoryQueryIn],
        responses=WithdrawalPageOut,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request)
        query = parse(HistoryQueryIn, request.query_params)
        return _withdrawals(caller.merchant, caller.platform_id, query)


def _cashout(merchant: Merchant, platform_id: str, source: str, body: dict[str, Any]) -> Response:
    withdrawal, created = crypto_withdrawal_create(
        merchant=merchant,
        platform_id=platform_id,
        source=source,
        request=Cashout(
            chain=body["chain"],
            token=body["token"],
            address=body["address"],
            amount_cents=body["amountCents"],
            request_id=body["requestId"],
        ),
    )
    return Response(withdrawal_json(withdrawal), status=201 if created else 200)


CASHOUT_RESPONSES = {201: WithdrawalOut, 200: WithdrawalOut}


class ClientWithdrawApi(ClientApiView):
    operation = "client.crypto.withdraw"
    errors = (*CASHOUT_ERRORS, "MERCHANT_NO_CALLBACK_URL")

    @extend_schema(
        operation_id="clientCryptoWithdraw",
        tags=["crypto"],
        request=CashoutIn,
        responses=CASHOUT_RESPONSES,
        summary="Cash out to an address: 201 when created, 200 with the first cashout when "
        "the requestId was used before.",
    )
    def post(self, request: Request) -> Response:
        caller = self.caller(request)
        body = parse(CashoutIn, request.data)
        return _cashout(caller.merchant, caller.platform_id, CryptoWithdrawal.Source.CLIENT, body)


class SecureWithdrawApi(MerchantApiView):
    operation = "secure.crypto.withdraw"
    errors = CASHOUT_ERRORS

    @extend_schema(
        operation_id="secureCryptoWithdraw",
        tags=["crypto"],
        request=SecureCashoutIn,
        responses=CASHOUT_RESPONSES,
    )
    def post(self, request: Request) -> Response:
        body = parse(SecureCashoutIn, request.data)
        return _cashout(
            self.merchant(request), body["platformId"], CryptoWithdrawal.Source.SELF, body
        )
