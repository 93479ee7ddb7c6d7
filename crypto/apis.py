"""Crypto endpoints: deposit addresses, deposit history, cashouts and their history (client
token and API key pairs), and the ``/sandbox/crypto/`` helpers."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core.errors import validation_error
from crypto.apischema import (
    DepositAddressOut,
    DepositPageOut,
    SandboxChainOut,
    SandboxTransferOut,
    WithdrawalOut,
    WithdrawalPageOut,
)
from crypto.models import CryptoWithdrawal
from crypto.networks import CHAINS
from crypto.representations import deposit_address_json, deposit_json, withdrawal_json
from crypto.sandbox import (
    SandboxTransfer,
    sandbox_chain_set,
    sandbox_transfer_confirm,
    sandbox_transfer_create,
    sandbox_transfer_reorg,
)
from crypto.selectors import crypto_deposits_page, crypto_withdrawals_page
from crypto.serializers import (
    CashoutIn,
    DepositAddressQueryIn,
    HistoryQueryIn,
    SandboxChainIn,
    SandboxConfirmationsIn,
    SandboxTransferIn,
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
TX_HASH = OpenApiParameter("txHash", str, OpenApiParameter.PATH)


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


def _transfer_json(found: SandboxTransfer) -> dict[str, Any]:
    transfer = found.transfer
    return {
        "txHash": transfer.tx_hash,
        "chain": transfer.chain,
        "confirmations": transfer.confirmations,
        "dropped": transfer.dropped,
        "deposit": deposit_json(found.deposit) if found.deposit else None,
        "withdrawal": withdrawal_json(found.withdrawal) if found.withdrawal else None,
    }


class SandboxCryptoTransfersApi(MerchantApiView):
    operation = "sandbox"
    errors = ("INVALID_TRANSITION",)

    @extend_schema(
        operation_id="sandboxCryptoTransfer",
        tags=["sandbox"],
        request=SandboxTransferIn,
        responses=SandboxTransferOut,
        summary="An incoming transfer to one of the merchant's deposit addresses.",
    )
    def post(self, request: Request) -> Response:
        body = parse(SandboxTransferIn, request.data)
        found = sandbox_transfer_create(
            merchant=self.merchant(request),
            chain=body["chain"],
            token=body["token"],
            address=body["address"],
            amount=body["amount"],
            confirmations=body["confirmations"],
            sender=body.get("from"),
        )
        return Response(_transfer_json(found))


class SandboxCryptoConfirmationsApi(MerchantApiView):
    operation = "sandbox"
    errors = ("TRANSACTION_NOT_FOUND", "INVALID_TRANSITION")

    @extend_schema(
        operation_id="sandboxCryptoConfirmations",
        tags=["sandbox"],
        request=SandboxConfirmationsIn,
        responses=SandboxTransferOut,
        parameters=[TX_HASH],
        summary="A transaction (a deposit's or a cashout's) now has this many confirmations.",
    )
    def post(self, request: Request, txHash: str) -> Response:  # noqa: N803 (the contract's name)
        body = parse(SandboxConfirmationsIn, request.data)
        found = sandbox_transfer_confirm(
            merchant=self.merchant(request), tx_hash=txHash, confirmations=body["confirmations"]
        )
        return Response(_transfer_json(found))


class SandboxCryptoReorgApi(MerchantApiView):
    operation = "sandbox"
    errors = ("TRANSACTION_NOT_FOUND", "INVALID_TRANSITION")

    @extend_schema(
        operation_id="sandboxCryptoReorg",
        tags=["sandbox"],
        request=None,
        responses=SandboxTransferOut,
        parameters=[TX_HASH],
        summary="A reorganisation drops a pending transaction: its deposit or cashout fails.",
    )
    def post(self, request: Request, txHash: str) -> Response:  # noqa: N803 (the contract's name)
        found = sandbox_transfer_reorg(merchant=self.merchant(request), tx_hash=txHash)
        return Response(_transfer_json(found))


class SandboxCryptoChainApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxCryptoChain",
        tags=["sandbox"],
        request=SandboxChainIn,
        responses=SandboxChainOut,
        parameters=[OpenApiParameter("chain", str, OpenApiParameter.PATH, enum=list(CHAINS))],
        summary=(
            "Halt or resume a sandbox chain, make its node refuse broadcasts: for the calling "
            "merchant only."
        ),
    )
    def post(self, request: Request, chain: str) -> Response:
        if chain not in CHAINS:
            raise validation_error({"chain": "Must be ETH, BSC or SOL."})
        body = parse(SandboxChainIn, request.data)
        config = sandbox_chain_set(
            merchant=self.merchant(request),
            chain=chain,
            paused=body.get("paused"),
            fail_broadcasts=body.get("failBroadcasts"),
        )
        return Response(
            {
                "chain": config.chain,
                "paused": config.paused,
                "failBroadcasts": config.fail_broadcasts,
            }
        )
