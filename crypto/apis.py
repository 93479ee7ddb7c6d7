"""Crypto endpoints: deposit addresses, deposit history, cashouts and their history (client
token and API key pairs), and the ``/sandbox/crypto/`` helpers."""

from typing import Any, ClassVar, cast

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core.errors import validation_error
from crypto.apischema import SandboxChainOut, SandboxTransferOut
from crypto.models import CryptoWithdrawal
from crypto.networks import CHAINS
from crypto.representations import (
    Chain,
    DepositAddressOut,
    DepositPageOut,
    WithdrawalOut,
    WithdrawalPageOut,
    deposit_address_json,
    deposit_json,
    deposit_page_json,
    withdrawal_json,
    withdrawal_page_json,
)
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
from merchants.views import CallerApiView, ClientApiView, MerchantApiView

ACCESS_ERRORS = ("ONCHAIN_DISABLED", "ONCHAIN_MERCHANT_NOT_VERIFIED")
TX_HASH = OpenApiParameter("txHash", str, OpenApiParameter.PATH)


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
        responses={201: WithdrawalOut, 200: WithdrawalOut},
        summary="Cash out to an address: 201 when created, 200 with the first cashout when "
        "the requestId was used before.",
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        withdrawal, created = crypto_withdrawal_create(
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
        return Response(withdrawal_json(withdrawal), status=201 if created else 200)


class SecureWithdrawApi(MerchantUserApi, CashoutApi):
    operation = "secure.crypto.withdraw"
    operation_id = "secureCryptoWithdraw"
    body_serializer = SecureCashoutIn


class ClientWithdrawApi(ClientUserApi, CashoutApi):
    operation = "client.crypto.withdraw"
    operation_id = "clientCryptoWithdraw"
    body_serializer = CashoutIn
    errors = (*CashoutApi.errors, "MERCHANT_NO_CALLBACK_URL")


def _transfer_json(found: SandboxTransfer) -> SandboxTransferOut:
    transfer = found.transfer
    return {
        "txHash": transfer.tx_hash,
        "chain": cast(Chain, transfer.chain),
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
