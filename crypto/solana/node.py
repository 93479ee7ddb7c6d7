"""The Solana JSON-RPC node (``CRYPTO_SOL_RPC_URL``) through solana-py, reduced to what the
gateway asks: blockhashes and block heights, an account's signatures and a transaction's token
balances, signature statuses, accounts (one, or many at once) and token balances, rent, health,
and raw sends. Every failure of the node or the network is a ChainError; a send the node refused
for good (it failed preflight or its signatures, so it was not forwarded) is a
SendRefusedError.

solana-py's client is asynchronous only (0.40 on) and the service is not: one event loop per
process runs in a daemon thread and keeps one client per node, its connections kept alive
between calls. Each call ends within ``RPC_TIMEOUT_SECONDS`` whole: httpx's timeouts bound each
read, not a node that drips its answer, so the call runs under ``asyncio.timeout``, which cancels
it (and closes its connection) when the time is up."""

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from solana.exceptions import SolanaRpcException
from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Commitment
from solana.rpc.core import RPCException
from solana.rpc.models import DataSliceOpts, TxOpts
from solders.pubkey import Pubkey
from solders.rpc.errors import (
    NodeUnhealthyMessage,
    RpcCustomErrorFieldless,
    SendTransactionPreflightFailureMessage,
)
from solders.signature import Signature
from solders.transaction_status import (
    TransactionConfirmationStatus,
    UiTransactionTokenBalance,
)

from crypto.chains.base import ChainError

RPC_TIMEOUT_SECONDS = 10
TOKEN_ACCOUNT_SIZE = 165  # bytes of an SPL token account (spl-token's Account::LEN)
MULTIPLE_ACCOUNTS = 100  # getMultipleAccounts' limit (Solana RPC docs; agave MAX_MULTIPLE_ACCOUNTS)
FINALIZED = Commitment("finalized")
CONFIRMED = Commitment("confirmed")
T = TypeVar("T")


class SendRefusedError(ChainError):
    """The node refused the transaction (preflight simulation or signature check failed):
    nothing was forwarded, nothing of it can land."""


@dataclass(frozen=True)
class SignatureInfo:
    """One entry of getSignaturesForAddress."""

    signature: str
    slot: int
    failed: bool


@dataclass(frozen=True)
class TokenBalance:
    """One entry of a transaction's pre- or postTokenBalances."""

    account_index: int
    mint: str
    owner: str
    amount: int  # raw token units
    decimals: int


@dataclass(frozen=True)
class TokenTransaction:
    """What a deposit needs of a transaction: its accounts and its token balances before and
    after (an account created in it has no entry before, one closed in it none after)."""

    signature: str
    slot: int
    failed: bool
    account_keys: list[str]
    pre: list[TokenBalance]
    post: list[TokenBalance]


@dataclass(frozen=True)
class Status:
    """getSignatureStatuses of one signature the cluster knows."""

    slot: int
    commitment: str  # processed, confirmed or finalized
    confirmations: int | None  # None once rooted
    error: str  # "" when it succeeded


class _Loop:
    """The process's event loop, in a daemon thread; a forked child starts its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="solana-rpc", daemon=True).start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop


_LOOP = _Loop()


def _describe(error: object) -> str:
    message = getattr(error, "message", None)
    return str(message) if message else str(error)


def _balances(entries: list[UiTransactionTokenBalance] | None) -> list[TokenBalance]:
    return [
        TokenBalance(
            account_index=int(entry.account_index),
            mint=str(entry.mint),
            owner=str(entry.owner) if entry.owner is not None else "",
            amount=int(entry.ui_token_amount.amount),
            decimals=int(entry.ui_token_amount.decimals),
        )
        for entry in entries or []
    ]


class SolanaNode:
    """One node. Thread-safe: calls from any thread run on the process's loop."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._clients: dict[int, AsyncClient] = {}

    def _client(self) -> AsyncClient:
        # Made in the loop's thread, once per process (a forked child's loop is new).
        pid = os.getpid()
        if pid not in self._clients:
            self._clients[pid] = AsyncClient(
                self.url,
                timeout=RPC_TIMEOUT_SECONDS,
                # The sweeps retry on their own schedule; a request must not stall a worker.
                max_transport_retries=0,
            )
        return self._clients[pid]

    def _call(self, what: str, make: Callable[[AsyncClient], Awaitable[T]]) -> T:
        async def run() -> T:
            try:
                async with asyncio.timeout(RPC_TIMEOUT_SECONDS):
                    answer = await make(self._client())
            except TimeoutError as exc:  # the deadline (an OSError: before the next clause)
                raise ChainError(f"{what}: no answer in {RPC_TIMEOUT_SECONDS} s") from exc
            except RPCException as exc:
                raise _rpc_error(what, exc.args[0] if exc.args else exc) from exc
            except (SolanaRpcException, OSError, ValueError) as exc:
                raise ChainError(f"{what}: {exc.__cause__ or exc}") from exc
            if type(answer) is int:
                # solders answers the bare code of an error it does not know (agave's -32017
                # on, a provider's -32000) instead of raising: it is an error all the same.
                raise _rpc_error(what, answer)
            return answer

        future = asyncio.run_coroutine_threadsafe(run(), _LOOP.get())
        try:
            # A little longer than the call's own deadline: this is for a loop that is stuck.
            return future.result(timeout=RPC_TIMEOUT_SECONDS + 5)
        except TimeoutError as exc:
            future.cancel()
            raise ChainError(f"{what}: no answer in {RPC_TIMEOUT_SECONDS} s") from exc

    # -- the chain

    def health(self) -> None:
        """Raises ChainError when the node says it is behind or unhealthy."""
        if not self._call("getHealth", lambda c: c.is_connected()):
            raise ChainError("getHealth: the node is not ok")

    def latest_blockhash(self) -> tuple[str, int]:
        """A blockhash to sign with and the last block height at which it can land."""
        answer = self._call("getLatestBlockhash", lambda c: c.get_latest_blockhash(CONFIRMED))
        return str(answer.value.blockhash), int(answer.value.last_valid_block_height)

    def block_height(self) -> int:
        """The height of the newest finalized block: no block at or below it can change."""
        return int(self._call("getBlockHeight", lambda c: c.get_block_height(FINALIZED)).value)

    def rent_exempt_minimum(self, size: int = TOKEN_ACCOUNT_SIZE) -> int:
        answer = self._call(
            "getMinimumBalanceForRentExemption",
            lambda c: c.get_minimum_balance_for_rent_exemption(size),
        )
        return int(answer.value)

    def lamports(self, address: str) -> int:
        return int(
            self._call("getBalance", lambda c: c.get_balance(Pubkey.from_string(address))).value
        )

    def account_owner(self, address: str) -> str | None:
        """The program that owns the account, None when it does not exist."""
        answer = self._call(
            "getAccountInfo",
            lambda c: c.get_account_info(Pubkey.from_string(address), commitment=CONFIRMED),
        )
        return str(answer.value.owner) if answer.value is not None else None

    def account_owners(self, addresses: list[str]) -> list[str | None]:
        """The program that owns each account, None for one that does not exist; at most
        ``MULTIPLE_ACCOUNTS`` addresses a call, the accounts' data left out."""
        answer = self._call(
            "getMultipleAccounts",
            lambda c: c.get_multiple_accounts(
                [Pubkey.from_string(address) for address in addresses],
                commitment=CONFIRMED,
                data_slice=DataSliceOpts(offset=0, length=0),
            ),
        )
        return [str(found.owner) if found is not None else None for found in answer.value]

    def token_account_mint(self, address: str) -> str | None:
        """The mint of an SPL token account (its first 32 bytes), None when it is not one."""
        answer = self._call(
            "getAccountInfo",
            lambda c: c.get_account_info(Pubkey.from_string(address), commitment=CONFIRMED),
        )
        data = bytes(answer.value.data) if answer.value is not None else b""
        if len(data) != TOKEN_ACCOUNT_SIZE:
            return None
        return str(Pubkey.from_bytes(data[:32]))

    def token_balance(self, address: str) -> int | None:
        """Raw units held by a token account, None when it does not exist."""
        try:
            answer = self._call(
                "getTokenAccountBalance",
                lambda c: c.get_token_account_balance(Pubkey.from_string(address), CONFIRMED),
            )
        except AccountNotFoundError:
            return None
        return int(answer.value.amount)

    def signatures(
        self, address: str, *, commitment: str, until: str, before: str, limit: int
    ) -> list[SignatureInfo]:
        """Signatures of transactions naming ``address``, newest first, older than ``before``
        and newer than ``until`` (either empty: no bound)."""
        answer = self._call(
            "getSignaturesForAddress",
            lambda c: c.get_signatures_for_address(
                Pubkey.from_string(address),
                before=Signature.from_string(before) if before else None,
                until=Signature.from_string(until) if until else None,
                limit=limit,
                commitment=Commitment(commitment),
            ),
        )
        return [
            SignatureInfo(
                signature=str(row.signature), slot=int(row.slot), failed=row.err is not None
            )
            for row in answer.value
        ]

    def transaction(self, signature: str, *, commitment: str) -> TokenTransaction | None:
        """The transaction (jsonParsed), None while the node has none at that commitment."""
        answer = self._call(
            "getTransaction",
            lambda c: c.get_transaction(
                Signature.from_string(signature),
                encoding="jsonParsed",
                commitment=Commitment(commitment),
                max_supported_transaction_version=0,
            ),
        )
        found: Any = answer.value
        if found is None:
            return None
        meta = found.transaction.meta
        message = found.transaction.transaction.message
        return TokenTransaction(
            signature=signature,
            slot=int(found.slot),
            failed=meta is None or meta.err is not None,
            account_keys=[str(getattr(key, "pubkey", key)) for key in message.account_keys],
            pre=_balances(meta.pre_token_balances if meta is not None else None),
            post=_balances(meta.post_token_balances if meta is not None else None),
        )

    def statuses(self, signatures: list[str]) -> list[Status | None]:
        """Where the cluster has each signature, searching its whole history."""
        answer = self._call(
            "getSignatureStatuses",
            lambda c: c.get_signature_statuses(
                [Signature.from_string(s) for s in signatures], search_transaction_history=True
            ),
        )
        found: list[Status | None] = []
        for status in answer.value:
            if status is None:
                found.append(None)
                continue
            found.append(
                Status(
                    slot=int(status.slot),
                    commitment=_commitment(status.confirmation_status),
                    confirmations=status.confirmations,
                    error=str(status.err) if status.err is not None else "",
                )
            )
        return found

    def send(self, raw: bytes, *, preflight: bool) -> str:
        """Hand a signed transaction to the node; its signature. Raises SendRefusedError when
        the node refused it, ChainError when the outcome is unknown (it may have been sent)."""
        options = TxOpts(
            skip_confirmation=True,
            skip_preflight=not preflight,
            preflight_commitment=CONFIRMED,
            max_retries=0,  # the transactions sweep sends it again, while it is valid
        )
        answer = self._call("sendTransaction", lambda c: c.send_raw_transaction(raw, options))
        return str(answer.value)


def _commitment(level: TransactionConfirmationStatus | None) -> str:
    if level == TransactionConfirmationStatus.Finalized:
        return "finalized"
    if level == TransactionConfirmationStatus.Confirmed:
        return "confirmed"
    return "processed"


class AccountNotFoundError(ChainError):
    """-32602 "could not find account": the account does not exist (yet, or any more)."""


class SignatureNotFoundError(ChainError):
    """-32020: a ``before`` or ``until`` signature the node cannot locate (agave 3.0 on: a node
    that forgot it, or one behind the one that served it). Older nodes answer as if none was
    given."""


FILTER_TRANSACTION_NOT_FOUND = -32020


def _rpc_error(what: str, error: object) -> ChainError:
    """The node's JSON-RPC error as the gateway acts on it (agave rpc-client-api
    ``custom_error.rs``: -32002 preflight failure, -32003 signature verification failure,
    -32005 node unhealthy, -32020 a filter's transaction not found; -32602 invalid params)."""
    text = f"{what}: {_describe(error)}"
    if isinstance(error, SendTransactionPreflightFailureMessage):
        if "AlreadyProcessed" in str(error.data.err):
            return ChainError(text)  # it landed already: not a refusal
        return SendRefusedError(text)
    if error == RpcCustomErrorFieldless.TransactionSignatureVerificationFailure:
        return SendRefusedError(f"{what}: transaction signature verification failure")
    if isinstance(error, NodeUnhealthyMessage):
        return ChainError(text)
    if "could not find account" in text:
        return AccountNotFoundError(text)
    if error == FILTER_TRANSACTION_NOT_FOUND:
        return SignatureNotFoundError(f"{what}: a signature it was given is not found")
    if isinstance(error, int):
        return ChainError(f"{what}: JSON-RPC error {error}")
    return ChainError(text)


@cache
def _node(url: str) -> SolanaNode:
    return SolanaNode(url)


def solana_node() -> SolanaNode:
    url = settings.CRYPTO_RPC_URLS.get("SOL")
    if not url:
        raise ChainError("no Solana node is configured (CRYPTO_SOL_RPC_URL)")
    return _node(url)
