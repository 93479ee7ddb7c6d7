"""Crypto endpoints: deposit addresses, deposit history, cashouts and their history (client
token and API key pairs)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc, paragraphs
from crypto import examples
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
from crypto.services.withdrawals import Cashout, crypto_withdrawal_create
from merchants.authentication import ClientCaller, MerchantCaller
from merchants.ratelimits import CLIENT_TRADE, CRYPTO_READ, SECURE_TRADE, Limited
from merchants.views import CallerApiView, Operation, Route

ACCESS_ERRORS = ("ONCHAIN_DISABLED", "ONCHAIN_MERCHANT_NOT_VERIFIED")


def platform_id(caller: MerchantCaller | ClientCaller, data: dict[str, Any]) -> str:
    """Whose crypto an operation is about: the query's or body's ``platformId`` for a merchant,
    the token's own account for a client."""
    if isinstance(caller, MerchantCaller):
        named: str = data["platformId"]
        return named
    return caller.platform_id


DEPOSIT_ADDRESS = """
    The address where {whom} sends USDT or USDC on a chain (`ETH`, `BSC` or `SOL`) to fund your
    wallet: each user has its own, the same on ETH and BSC. A transfer there is credited 1:1 in
    USD once it has `minConfirmations` (transfers below `minDepositCents` are never credited),
    and reported by the `crypto_deposit.<status>` webhooks. Only the listed `tokens` are
    credited.

    On Solana each token has an account of its own, opened on request: ask with the right
    `token` before each Solana deposit; while it opens the answer is `pending` (no `address`
    yet): ask again until it is `active`. An emptied account is closed; asking again reopens it
    at the same address. `paused` means the address is valid but credits wait until the chain
    resumes.

    Crypto must be enabled in this environment (`ONCHAIN_DISABLED`) and your merchant account
    verified (`ONCHAIN_MERCHANT_NOT_VERIFIED`). Too many Solana accounts open service-wide
    answers `ONCHAIN_ADDRESS_CAPACITY`: retry later.
"""


@extend_schema(tags=["crypto"], responses=DepositAddressOut)
def deposit_address(self: CallerApiView, request: Request) -> Response:
    query = self.parse_query(request)
    found = deposit_address_get(
        merchant=self.merchant(request),
        platform_id=platform_id(self.caller(request), query),
        chain=query["chain"],
        token=query["token"],
    )
    return Response(deposit_address_json(found))


SecureCryptoDepositAddressApi, ClientCryptoDepositAddressApi = Operation(
    method="get",
    handler=deposit_address,
    input=DepositAddressQueryIn,
    errors=(*ACCESS_ERRORS, "ONCHAIN_ADDRESS_CAPACITY"),
    secure=Route(
        operation_id="secureCryptoDepositAddress",
        rate_limit=Limited("secure.crypto.deposit_address", CRYPTO_READ, shared="crypto.read"),
        input=SecureDepositAddressQueryIn,
        doc=OperationDoc(
            summary="Get a user's crypto deposit address",
            description=DEPOSIT_ADDRESS.format(whom="the user with `platformId`"),
            parameters={"platformId": examples.PLATFORM_ID, "chain": "ETH"},
            response=examples.ETH_DEPOSIT_ADDRESS,
        ),
    ),
    client=Route(
        operation_id="clientCryptoDepositAddress",
        rate_limit=Limited("client.crypto.deposit_address", CRYPTO_READ, shared="crypto.read"),
        doc=OperationDoc(
            summary="Get the client's crypto deposit address",
            description=DEPOSIT_ADDRESS.format(whom="the client"),
            parameters={"chain": "SOL", "token": "USDC"},
            response=examples.SOL_DEPOSIT_ADDRESS_PENDING,
        ),
    ),
).views()


HISTORY = """
    {whose} crypto {what}, newest first, `limit` a page (1-100, 20 by default). For the next
    page pass `nextBefore` as `before` (only rows created before it); `null` means the last
    page. Rows sharing the last row's time all come on the same page, which may then run past
    `limit`, so no row is ever skipped.
"""

DEPOSIT_STATUSES = """
    A deposit is `pending` until it has its chain's confirmations, then `completed` (credited
    to your wallet). Below the chain's minimum it is `below_minimum` and never credited; above
    your review threshold or from a flagged sender it is `frozen` until staff release it
    (`completed`) or refund it (`refunded`); a reorganisation of the chain makes it `failed`.
"""


@extend_schema(tags=["crypto"], responses=DepositPageOut)
def deposits(self: CallerApiView, request: Request) -> Response:
    query = self.parse_query(request)
    rows, next_before = crypto_deposits_page(
        merchant=self.merchant(request),
        platform_id=platform_id(self.caller(request), query),
        before=query.get("before"),
        limit=query["limit"],
    )
    return Response(deposit_page_json(rows, next_before))


SecureCryptoDepositsApi, ClientCryptoDepositsApi = Operation(
    method="get",
    handler=deposits,
    input=HistoryQueryIn,
    secure=Route(
        operation_id="secureCryptoDeposits",
        rate_limit=Limited("secure.crypto.deposits", CRYPTO_READ, shared="crypto.read"),
        input=SecureHistoryQueryIn,
        doc=OperationDoc(
            summary="List a user's crypto deposits",
            description=paragraphs(
                HISTORY.format(whose="The user's (`platformId`)", what="deposits"),
                DEPOSIT_STATUSES,
            ),
            parameters={"platformId": examples.PLATFORM_ID, "limit": "20"},
            response=examples.DEPOSIT_PAGE,
        ),
    ),
    client=Route(
        operation_id="clientCryptoDeposits",
        rate_limit=Limited("client.crypto.deposits", CRYPTO_READ, shared="crypto.read"),
        doc=OperationDoc(
            summary="List the client's crypto deposits",
            description=paragraphs(
                HISTORY.format(whose="The client's", what="deposits"), DEPOSIT_STATUSES
            ),
            parameters={"limit": "20", "before": "2026-11-23T14:40:00.000Z"},
            response=examples.DEPOSIT_PAGE,
        ),
    ),
).views()


CASHOUT_STATUSES = """
    A cashout goes `awaiting_approval` (client cashouts: your approval callback), `in_review`
    (above your review threshold: staff decide), `approved`, `sent` (with `txHash`) and
    `completed` once confirmed; it ends `failed`, `rejected` or `cancelled` otherwise, with its
    `reason`, and its whole amount back in your balance.
"""


@extend_schema(tags=["crypto"], responses=WithdrawalPageOut)
def cashouts(self: CallerApiView, request: Request) -> Response:
    query = self.parse_query(request)
    rows, next_before = crypto_withdrawals_page(
        merchant=self.merchant(request),
        platform_id=platform_id(self.caller(request), query),
        before=query.get("before"),
        limit=query["limit"],
    )
    return Response(withdrawal_page_json(rows, next_before))


SecureCryptoWithdrawalsApi, ClientCryptoWithdrawalsApi = Operation(
    method="get",
    handler=cashouts,
    input=HistoryQueryIn,
    secure=Route(
        operation_id="secureCryptoWithdrawals",
        rate_limit=Limited("secure.crypto.withdrawals", CRYPTO_READ, shared="crypto.read"),
        input=SecureHistoryQueryIn,
        doc=OperationDoc(
            summary="List a user's crypto cashouts",
            description=paragraphs(
                HISTORY.format(whose="The user's (`platformId`)", what="cashouts"),
                "It lists the cashouts made for this user through either route.",
                CASHOUT_STATUSES,
            ),
            parameters={"platformId": examples.PLATFORM_ID, "limit": "20"},
            response=examples.WITHDRAWAL_PAGE,
        ),
    ),
    client=Route(
        operation_id="clientCryptoWithdrawals",
        rate_limit=Limited("client.crypto.withdrawals", CRYPTO_READ, shared="crypto.read"),
        doc=OperationDoc(
            summary="List the client's crypto cashouts",
            description=paragraphs(
                HISTORY.format(whose="The client's", what="cashouts"), CASHOUT_STATUSES
            ),
            parameters={"limit": "20"},
            response=examples.WITHDRAWAL_PAGE,
        ),
    ),
).views()


CASHOUT = """
    Pays `amountCents` of your wallet's balance out in USDT or USDC to `address` on a chain,
    for {whom}. The amount is locked at once (`INSUFFICIENT_BALANCE` when your available
    balance is short); the chain's flat fee (`feeCents`) is taken from it and the address
    receives the rest (`receiveCents`, `cryptoAmount` tokens). EVM addresses must carry their
    EIP-55 checksum and Solana ones be base58 of 32 bytes, and addresses where tokens are lost
    are refused: the zero address and the reserved range below `0x10000` (precompiles, system
    contracts, `0x...dEaD`), Solana's system program, incinerator and token programs, the
    token contracts (mints) themselves and the service's hot wallet
    (`ONCHAIN_WITHDRAW_INVALID_ADDRESS`, its message saying why); what the address receives
    must reach the chain's minimum
    (`ONCHAIN_WITHDRAW_BELOW_MIN`, with the fee and the minimum in `details`).

    **Idempotent by `requestId`.** Choose a `requestId` per cashout: the first request creates
    it; the same `requestId` for the same user again answers that first cashout, whatever the
    body says now (both 200, as every create). Resend freely after a timeout.

    {next}

    The `crypto_withdrawal.<status>` webhooks report every change; any exit (`failed`,
    `rejected`, `cancelled`) refunds the whole amount. Crypto must be enabled
    (`ONCHAIN_DISABLED`) and your merchant account verified (`ONCHAIN_MERCHANT_NOT_VERIFIED`).
"""


@extend_schema(tags=["crypto"], responses=WithdrawalOut)
def cashout(self: CallerApiView, request: Request) -> Response:
    body = self.parse_body(request)
    caller = self.caller(request)
    withdrawal, _ = crypto_withdrawal_create(
        merchant=caller.merchant,
        platform_id=platform_id(caller, body),
        source=(
            CryptoWithdrawal.Source.SELF
            if isinstance(caller, MerchantCaller)
            else CryptoWithdrawal.Source.CLIENT
        ),
        cashout=Cashout(
            chain=body["chain"],
            token=body["token"],
            address=body["address"],
            amount_cents=body["amountCents"],
            request_id=body["requestId"],
        ),
    )
    # 200 as every create of the API answers, for the new cashout and for a repeat alike.
    return Response(withdrawal_json(withdrawal))


SecureCryptoWithdrawApi, ClientCryptoWithdrawApi = Operation(
    method="post",
    handler=cashout,
    errors=(
        *ACCESS_ERRORS,
        "INSUFFICIENT_BALANCE",
        "ONCHAIN_WITHDRAW_INVALID_ADDRESS",
        "ONCHAIN_WITHDRAW_BELOW_MIN",
        "TRANSACTION_CONFLICT",
    ),
    secure=Route(
        operation_id="secureCryptoWithdraw",
        rate_limit=Limited("secure.crypto.withdraw", SECURE_TRADE),
        input=SecureCashoutIn,
        doc=OperationDoc(
            summary="Cash out to a crypto address for a user",
            description=CASHOUT.format(
                whom="the user with `platformId`",
                next=(
                    "Your own request needs no approval: the cashout is `approved` (or "
                    "`in_review` above your review threshold, until staff decide), then "
                    "broadcast (`sent`, with `txHash`) and `completed` once the transaction has "
                    "its confirmations."
                ),
            ),
            request=examples.SECURE_CASHOUT_REQUEST,
            response=examples.SELF_CASHOUT,
        ),
    ),
    client=Route(
        operation_id="clientCryptoWithdraw",
        rate_limit=Limited("client.crypto.withdraw", CLIENT_TRADE),
        input=CashoutIn,
        doc=OperationDoc(
            summary="Cash out to a crypto address for the client",
            description=CASHOUT.format(
                whom="the client",
                next=(
                    "The cashout starts `awaiting_approval`: your callback URL gets the "
                    "`crypto_withdrawal.awaiting_approval` webhook; answer 2xx to approve (check "
                    "and deduct the client's balance on your side), 4xx to reject. Without an "
                    "active callback URL the request is refused (`MERCHANT_NO_CALLBACK_URL`). "
                    "Approved, it is `in_review` above your review threshold until staff "
                    "decide, then broadcast (`sent`) and `completed` once confirmed."
                ),
            ),
            request=examples.CASHOUT_REQUEST,
            response=examples.CLIENT_CASHOUT,
        ),
        errors=("MERCHANT_NO_CALLBACK_URL",),
    ),
).views()
