"""The ``/sandbox/crypto/`` helpers: incoming transfers, confirmations, reorgs, chain switches."""

from typing import cast

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from core.errors import validation_error
from crypto.networks import CHAINS
from crypto.representations import Chain, deposit_json, withdrawal_json
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.representations import SandboxChainOut, SandboxTransferOut
from sandbox.serializers import SandboxChainIn, SandboxConfirmationsIn, SandboxTransferIn
from sandbox.services.crypto import (
    SandboxTransfer,
    sandbox_chain_set,
    sandbox_transfer_confirm,
    sandbox_transfer_create,
    sandbox_transfer_reorg,
)

TX_HASH = OpenApiParameter(
    "txHash", str, OpenApiParameter.PATH, description="a deposit's or a cashout's transaction"
)


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
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxTransferIn
    errors = ("INVALID_AMOUNT", "ONCHAIN_WITHDRAW_INVALID_ADDRESS", "INVALID_TRANSITION")
    doc = OperationDoc(
        summary="Simulate an incoming crypto transfer",
        description="""
            Pays `amount` tokens (a decimal string or number above 0, with at most the token's
            decimals on the chain, else `INVALID_AMOUNT`) to
            one of your deposit addresses (from `GET /secure/crypto/deposit-address` or
            `GET /client/crypto/deposit-address`), as a sender on the chain would: it makes the
            deposit you then see in the deposit lists and webhooks. With `confirmations` at the
            chain's minimum or more it is credited at once; fewer leave it `pending` until
            `POST /sandbox/crypto/transfers/{txHash}/confirmations` gives it more. `from` is the
            sender's address (random when not given).

            An address that is not one of your deposit addresses, or a `from` that is no address
            of the chain, is refused with `ONCHAIN_WITHDRAW_INVALID_ADDRESS` naming the field; a
            Solana token account not open (yet) `INVALID_TRANSITION`.
        """,
        request=examples.TRANSFER_REQUEST,
        response=examples.TRANSFER,
    )

    @extend_schema(
        operation_id="sandboxCryptoTransfer", tags=["sandbox"], responses=SandboxTransferOut
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
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
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxConfirmationsIn
    errors = ("TRANSACTION_NOT_FOUND", "INVALID_TRANSITION")
    doc = OperationDoc(
        summary="Confirm a crypto transaction",
        description="""
            Sets how many confirmations a transaction of yours has: a deposit's (credited when
            it reaches the chain's `minConfirmations`, unless the chain is paused) or a sent
            cashout's (`completed` at the chain's confirmations). Confirmations only grow: fewer
            than the transaction has, or a transaction dropped, answer `INVALID_TRANSITION`.
            Another merchant's transaction or an unknown hash answer `TRANSACTION_NOT_FOUND`.
        """,
        parameters={"txHash": examples.CASHOUT_CONFIRMED["txHash"]},
        request=examples.CONFIRMATIONS_REQUEST,
        response=examples.CASHOUT_CONFIRMED,
    )

    @extend_schema(
        operation_id="sandboxCryptoConfirmations",
        tags=["sandbox"],
        responses=SandboxTransferOut,
        parameters=[TX_HASH],
    )
    def post(self, request: Request, txHash: str) -> Response:  # noqa: N803 (the contract's name)
        body = self.parse_body(request)
        found = sandbox_transfer_confirm(
            merchant=self.merchant(request), tx_hash=txHash, confirmations=body["confirmations"]
        )
        return Response(_transfer_json(found))


class SandboxCryptoReorgApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    errors = ("TRANSACTION_NOT_FOUND", "INVALID_TRANSITION")
    doc = OperationDoc(
        summary="Drop a pending crypto transaction (chain reorganisation)",
        description="""
            Simulates a reorganisation of the chain that takes a transaction of yours out: a
            pending deposit becomes `failed` (never credited), a sent cashout `failed`
            (`TX_DROPPED`) and refunded. A credited deposit or a completed cashout is final:
            `INVALID_TRANSITION`. Another merchant's transaction or an unknown hash answer
            `TRANSACTION_NOT_FOUND`. No body.
        """,
        parameters={"txHash": examples.REORGED["txHash"]},
        response=examples.REORGED,
    )

    @extend_schema(
        operation_id="sandboxCryptoReorg",
        tags=["sandbox"],
        request=None,
        responses=SandboxTransferOut,
        parameters=[TX_HASH],
    )
    def post(self, request: Request, txHash: str) -> Response:  # noqa: N803 (the contract's name)
        found = sandbox_transfer_reorg(merchant=self.merchant(request), tx_hash=txHash)
        return Response(_transfer_json(found))


class SandboxCryptoChainApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxChainIn
    doc = OperationDoc(
        summary="Halt or resume a sandbox chain",
        description="""
            Breaks a chain in your sandbox world, to test how your integration copes:
            `paused: true` halts it (your deposit addresses show `paused`; deposits and cashouts
            wait, credited or sent once it resumes), `failBroadcasts: true` makes its node
            refuse cashout broadcasts (retried, then the cashout fails `BROADCAST_FAILED` and
            is refunded). A field left out keeps its value; `false` restores. Only your world
            is touched: other merchants' chains go on.
        """,
        parameters={"chain": "ETH"},
        request=examples.CHAIN_REQUEST,
        response=examples.CHAIN,
    )

    @extend_schema(
        operation_id="sandboxCryptoChain",
        tags=["sandbox"],
        responses=SandboxChainOut,
        parameters=[OpenApiParameter("chain", str, OpenApiParameter.PATH, enum=list(CHAINS))],
    )
    def post(self, request: Request, chain: str) -> Response:
        if chain not in CHAINS:
            raise validation_error({"chain": "Must be ETH, BSC or SOL."})
        body = self.parse_body(request)
        config = sandbox_chain_set(
            merchant=self.merchant(request),
            chain=chain,
            paused=body.get("paused"),
            fail_broadcasts=body.get("failBroadcasts"),
        )
        answer: SandboxChainOut = {
            "chain": cast(Chain, config.chain),
            "paused": config.paused,
            "failBroadcasts": config.fail_broadcasts,
        }
        return Response(answer)
