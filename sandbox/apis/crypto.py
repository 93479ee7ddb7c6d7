"""The ``/sandbox/crypto/`` helpers: incoming transfers, confirmations, reorgs, chain switches."""

from typing import cast

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core.errors import validation_error
from crypto.networks import CHAINS
from crypto.representations import Chain, deposit_json, withdrawal_json
from merchants.views import MerchantApiView
from sandbox.representations import SandboxChainOut, SandboxTransferOut
from sandbox.serializers import SandboxChainIn, SandboxConfirmationsIn, SandboxTransferIn
from sandbox.services.crypto import (
    SandboxTransfer,
    sandbox_chain_set,
    sandbox_transfer_confirm,
    sandbox_transfer_create,
    sandbox_transfer_reorg,
)

TX_HASH = OpenApiParameter("txHash", str, OpenApiParameter.PATH)


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
    errors = ("INVALID_AMOUNT", "ONCHAIN_WITHDRAW_INVALID_ADDRESS", "INVALID_TRANSITION")

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
        answer: SandboxChainOut = {
            "chain": cast(Chain, config.chain),
            "paused": config.paused,
            "failBroadcasts": config.fail_broadcasts,
        }
        return Response(answer)
