"""A recorded Solana JSON-RPC server for the tests: a real HTTP server on a loopback port of its
own, answering the methods the gateway calls with the shapes of Solana's RPC documentation
(solana.com/docs/rpc/http/<method>), over the ``Ledger`` (LiteSVM and the cluster around it).
docs/solana.md lists every behaviour with its source, and where the sources disagree or are
silent, the stricter answer given here.

Per method: getLatestBlockhash (``{context, value: {blockhash, lastValidBlockHeight}}``, the
newest block's at ``confirmed``, the newest finalized one's at ``finalized``), getBlockHeight
(at the asked commitment), getSignaturesForAddress (newest first, ``before``/``until``
exclusive, ``limit`` 1-1000, ``processed`` refused; entries ``{signature, slot, err, memo,
blockTime, confirmationStatus}``; a ``before`` or ``until`` the node cannot locate is ``-32020
Transaction <signature> not found``, as agave 3.0 answers (anza-xyz/agave#7937), where older
nodes answered as if it was not given), getTransaction (``jsonParsed`` only: ``accountKeys``
as ``{pubkey, signer, writable, source}``, parsed spl-token, spl-associated-token-account and
spl-memo instructions, ``meta`` with ``pre/postBalances``, ``pre/postTokenBalances``
``{accountIndex, mint, owner, programId, uiTokenAmount}`` as the bank held them before and after
the whole transaction (an account created in it has no entry before, one closed in it none
after), ``err``, ``status``, ``logMessages``; null when the transaction is not at that
commitment or the node no longer has it; ``processed`` refused; -32015 without
``maxSupportedTransactionVersion``), getAccountInfo and getMultipleAccounts (at most 100; null
for a missing account; data in ``binary``, ``base58`` or ``base64``, cut to ``dataSlice``,
base58 refused above 128 bytes with -32600), getTokenAccountBalance (-32602 ``could not find
account`` / ``not a Token account``), getBalance, getSignatureStatuses (at most 256;
``confirmations`` null once rooted; without ``searchTransactionHistory`` only the recent status
cache), getMinimumBalanceForRentExemption, getHealth (``ok``, or ``-32005 Node is behind by N
slots`` with ``numSlotsBehind``), sendTransaction (base58 or base64; signatures verified,
``-32003 Transaction signature verification failure``; preflight unless ``skipPreflight``: the
node's health first (-32005), then ``-32002 Transaction simulation failed: <error>`` with the
simulation result as ``data``, ``BlockhashNotFound`` for an expired blockhash,
``AlreadyProcessed`` for one in a block; an expired transaction sent without preflight is
accepted and never lands). Error codes and messages: agave ``rpc-client-api/src/custom_error.rs``
and ``rpc/src/rpc.rs``. Rate limits: HTTP 429 with a JSON-RPC error body and ``Retry-After``, as
public RPC providers answer (Solana docs "Clusters": 100 requests per 10 s per IP on the public
endpoints)."""

import base64
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from solders.account import Account
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from spl.memo.constants import MEMO_PROGRAM_ID
from spl.token.constants import ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID
from spl.token.instructions import decode_close_account, decode_transfer_checked

from tests.crypto.solana.ledger import (
    Landed,
    Ledger,
    TokenBalance,
    error_json,
    error_text,
)

BLOCK_TIME_BASE = 1_767_000_000
MAX_MULTIPLE_ACCOUNTS = 100  # agave rpc-client-api request.rs
MAX_BASE58_BYTES = 128  # agave account-decoder
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    text = ""
    while number:
        number, digit = divmod(number, 58)
        text = BASE58[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text


def b58decode(text: str) -> bytes:
    number = 0
    for char in text:
        number = number * 58 + BASE58.index(char)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclass
class SolanaRpc:
    """The server's state: its ledger, what it was asked, and the faults the tests switch on."""

    ledger: Ledger = field(default_factory=Ledger)
    url: str = ""
    calls: list[str] = field(default_factory=list)
    throttle: int = 0  # the next N requests answer HTTP 429
    behind: int = 0  # getHealth: the node is behind by this many slots
    lose_answers: int = 0  # the next N sends are executed, but the answer is an HTTP 503
    # Called with (method, params) once an answer is made and before it is sent: what happens
    # elsewhere while the caller waits for it (a test's interleaving).
    on_answer: Callable[[str, list[Any]], None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, method: str) -> int:
        return self.calls.count(method)

    # -- dispatch

    def handle(self, request: dict[str, Any]) -> Any:
        method = request.get("method")
        params = request.get("params") or []
        self.calls.append(str(method))
        answer = getattr(self, f"rpc_{method}", None)
        if answer is None:
            raise RpcError(-32601, "Method not found")
        result = answer(*params)
        if self.on_answer is not None:
            self.on_answer(str(method), params)
        return result

    def _context(self) -> dict[str, Any]:
        return {"slot": self.ledger.height + 1234, "apiVersion": "2.2.0"}

    def _height(self, config: dict[str, Any] | None) -> int:
        commitment = (config or {}).get("commitment", "finalized")
        return self.ledger.finalized_height if commitment == "finalized" else self.ledger.height

    # -- the chain

    def rpc_getHealth(self) -> str:
        if self.behind:
            raise RpcError(
                -32005,
                f"Node is behind by {self.behind} slots",
                {"numSlotsBehind": self.behind},
            )
        return "ok"

    def rpc_getLatestBlockhash(self, config: dict[str, Any] | None = None) -> Any:
        finalized = (config or {}).get("commitment", "finalized") == "finalized"
        blockhash, last_valid = self.ledger.latest_blockhash(finalized=finalized)
        return {
            "context": self._context(),
            "value": {"blockhash": blockhash, "lastValidBlockHeight": last_valid},
        }

    def rpc_getBlockHeight(self, config: dict[str, Any] | None = None) -> int:
        return self._height(config)

    def rpc_getMinimumBalanceForRentExemption(self, size: int, config: Any = None) -> int:
        return self.ledger.rent(int(size))

    def rpc_getBalance(self, address: str, config: Any = None) -> Any:
        found = self.ledger.account(_pubkey(address))
        return {"context": self._context(), "value": found.lamports if found else 0}

    def rpc_getAccountInfo(self, address: str, config: dict[str, Any] | None = None) -> Any:
        found = self.ledger.account(_pubkey(address))
        return {"context": self._context(), "value": _account_json(found, config or {})}

    def rpc_getMultipleAccounts(
        self, addresses: list[str], config: dict[str, Any] | None = None
    ) -> Any:
        if len(addresses) > MAX_MULTIPLE_ACCOUNTS:
            raise RpcError(-32602, f"Too many inputs provided; max {MAX_MULTIPLE_ACCOUNTS}")
        found = [self.ledger.account(_pubkey(address)) for address in addresses]
        return {
            "context": self._context(),
            "value": [_account_json(account, config or {}) for account in found],
        }

    def rpc_getTokenAccountBalance(self, address: str, config: Any = None) -> Any:
        if self.ledger.account(_pubkey(address)) is None:
            raise RpcError(-32602, "Invalid param: could not find account")
        held = self.ledger.token_account(address)
        if held is None:
            raise RpcError(-32602, "Invalid param: not a Token account")
        mint, _owner, amount = held
        return {"context": self._context(), "value": _ui_amount(amount, self.ledger.decimals(mint))}

    # -- transactions

    def rpc_getSignaturesForAddress(
        self, address: str, config: dict[str, Any] | None = None
    ) -> Any:
        config = config or {}
        commitment = config.get("commitment", "finalized")
        _at_least_confirmed(commitment)
        limit = int(config.get("limit", 1000))
        if not 1 <= limit <= 1000:
            raise RpcError(-32602, "Invalid limit; max 1000")
        with self.ledger.lock:
            ours = list(reversed(self.ledger.by_address.get(_pubkey(address), [])))
            rows = [self.ledger.landed[s] for s in ours]
            rows = [row for row in rows if self.ledger.served(row)]
            if commitment == "finalized":
                rows = [row for row in rows if self.ledger.finalized(row)]
            # The cursors are looked up among every transaction the node has, not only this
            # address's; one it cannot find is an error (agave 3.0, anza-xyz/agave#7937).
            for cursor in ("before", "until"):
                signature = config.get(cursor)
                if signature and not self._locatable(signature, commitment):
                    raise RpcError(-32020, f"Transaction {signature} not found")
            if config.get("before"):
                before = self.ledger.landed[config["before"]]
                rows = [row for row in rows if row.height < before.height]
            if config.get("until"):
                until = self.ledger.landed[config["until"]]
                rows = [row for row in rows if row.height > until.height]
            return [self._signature_entry(row) for row in rows[:limit]]

    def _locatable(self, signature: str, commitment: str) -> bool:
        landed = self.ledger.landed.get(signature)
        return (
            landed is not None
            and self.ledger.served(landed)
            and (commitment != "finalized" or self.ledger.finalized(landed))
        )

    def _signature_entry(self, row: Landed) -> dict[str, Any]:
        return {
            "signature": row.signature,
            "slot": row.slot,
            "err": error_json(row.err) if row.err is not None else None,
            "memo": _memo(row),
            "blockTime": BLOCK_TIME_BASE + row.height // 2,
            "confirmationStatus": "finalized" if self.ledger.finalized(row) else "confirmed",
        }

    def rpc_getTransaction(self, signature: str, config: dict[str, Any] | None = None) -> Any:
        config = config or {}
        if config.get("encoding") != "jsonParsed":
            raise RpcError(-32602, "Invalid params: this server answers encoding jsonParsed only")
        commitment = config.get("commitment", "finalized")
        _at_least_confirmed(commitment)
        with self.ledger.lock:
            landed = self.ledger.landed.get(signature)
            if landed is None or not self.ledger.served(landed):
                return None
            if commitment == "finalized" and not self.ledger.finalized(landed):
                return None
            if config.get("maxSupportedTransactionVersion") is None:
                raise RpcError(
                    -32015,
                    "Transaction version (0) is not supported by the requesting client. "
                    "Please try the request again with the following configuration parameter: "
                    '"maxSupportedTransactionVersion": 0',
                )
            return _transaction_json(landed, self.ledger)

    def rpc_getSignatureStatuses(
        self, signatures: list[str], config: dict[str, Any] | None = None
    ) -> Any:
        history = bool((config or {}).get("searchTransactionHistory", False))
        if len(signatures) > 256:
            raise RpcError(-32602, "Too many inputs provided; max 256")
        values = []
        for signature in signatures:
            landed = self.ledger.status_of(signature, history=history)
            if landed is None:
                values.append(None)
                continue
            final = self.ledger.finalized(landed)
            err = error_json(landed.err) if landed.err is not None else None
            values.append(
                {
                    "slot": landed.slot,
                    "confirmations": None if final else self.ledger.height - landed.height,
                    "err": err,
                    "status": {"Ok": None} if err is None else {"Err": err},
                    "confirmationStatus": "finalized" if final else "confirmed",
                }
            )
        return {"context": self._context(), "value": values}

    def rpc_sendTransaction(self, encoded: str, config: dict[str, Any] | None = None) -> str:
        config = config or {}
        raw = (
            base64.b64decode(encoded) if config.get("encoding") == "base64" else b58decode(encoded)
        )
        try:
            transaction = VersionedTransaction.from_bytes(raw)
        except Exception as exc:
            raise RpcError(-32602, f"invalid transaction: {exc}") from exc
        if not all(transaction.verify_with_results()):
            raise RpcError(-32003, "Transaction signature verification failure")
        signature = str(transaction.signatures[0])
        if not config.get("skipPreflight", False):
            if self.behind:  # preflight asks the node's health first (agave rpc.rs)
                raise RpcError(
                    -32005,
                    f"Node is behind by {self.behind} slots",
                    {"numSlotsBehind": self.behind},
                )
            self._preflight(transaction, signature)
        self.ledger.accept(transaction)
        if self.lose_answers:
            self.lose_answers -= 1
            raise AnswerLostError
        return signature

    def _preflight(self, transaction: VersionedTransaction, signature: str) -> None:
        with self.ledger.lock:
            if signature in self.ledger.landed:
                raise _preflight_failure(
                    "AlreadyProcessed", "This transaction has already been processed"
                )
            if not self.ledger.blockhash_valid(str(transaction.message.recent_blockhash)):
                raise _preflight_failure("BlockhashNotFound", "Blockhash not found")
            failed = self.ledger.simulate(transaction)
        if failed is not None:
            meta = failed.meta()
            raise RpcError(
                -32002,
                f"Transaction simulation failed: {error_text(failed.err())}",
                {
                    "err": error_json(failed.err()),
                    "logs": list(meta.logs()),
                    "accounts": None,
                    "unitsConsumed": int(meta.compute_units_consumed()),
                    "returnData": None,
                },
            )


class AnswerLostError(Exception):
    """The transaction went through; the answer to the caller is lost (HTTP 503)."""


def _preflight_failure(err: str, message: str) -> RpcError:
    return RpcError(
        -32002,
        f"Transaction simulation failed: {message}",
        {"err": err, "logs": [], "accounts": None, "unitsConsumed": 0, "returnData": None},
    )


def _at_least_confirmed(commitment: str) -> None:
    """getSignaturesForAddress and getTransaction refuse ``processed`` (agave rpc.rs,
    ``check_is_at_least_confirmed``)."""
    if commitment not in ("confirmed", "finalized"):
        raise RpcError(-32602, "Method does not support commitment below `confirmed`")


def _account_json(found: Account | None, config: dict[str, Any]) -> dict[str, Any] | None:
    """An account as getAccountInfo and getMultipleAccounts render it (agave ``encode_account``):
    its data in the asked encoding, cut to ``dataSlice``; base58 (and the legacy bare
    ``binary``, the default) only up to 128 bytes. jsonParsed and zstd are not served here."""
    if found is None:
        return None
    data = bytes(found.data)
    if config.get("dataSlice"):
        offset, length = int(config["dataSlice"]["offset"]), int(config["dataSlice"]["length"])
        data = data[offset : offset + length]
    encoding = config.get("encoding", "binary")
    if encoding in ("binary", "base58") and len(data) > MAX_BASE58_BYTES:
        raise RpcError(
            -32600,
            f"Encoded binary (base 58) data should be less than {MAX_BASE58_BYTES} bytes, "
            "please use Base64 encoding.",
        )
    if encoding == "binary":
        encoded: Any = b58encode(data)
    elif encoding == "base58":
        encoded = [b58encode(data), "base58"]
    elif encoding == "base64":
        encoded = [base64.b64encode(data).decode(), "base64"]
    else:
        raise RpcError(-32602, f"Invalid params: this server answers no {encoding} encoding")
    return {
        "data": encoded,
        "executable": found.executable,
        "lamports": found.lamports,
        "owner": str(found.owner),
        "rentEpoch": 18446744073709551615,
        "space": len(found.data),
    }


def _pubkey(address: str) -> str:
    try:
        return str(Pubkey.from_string(address))
    except ValueError as exc:
        raise RpcError(-32602, f"Invalid param: {exc}") from exc


def _ui_amount(amount: int, decimals: int) -> dict[str, Any]:
    ui = Decimal(amount).scaleb(-decimals)
    return {
        "amount": str(amount),
        "decimals": decimals,
        "uiAmount": float(ui),
        "uiAmountString": format(ui.normalize(), "f"),
    }


def _token_balances(entries: list[TokenBalance], ledger: Ledger) -> list[dict[str, Any]]:
    return [
        {
            "accountIndex": entry.account_index,
            "mint": entry.mint,
            "owner": entry.owner,
            "programId": str(TOKEN_PROGRAM_ID),
            "uiTokenAmount": _ui_amount(entry.amount, ledger.decimals(entry.mint)),
        }
        for entry in entries
    ]


def _memo(landed: Landed) -> str | None:
    message = landed.transaction.message
    keys = message.account_keys
    memos = [
        bytes(ix.data).decode(errors="replace")
        for ix in message.instructions
        if keys[ix.program_id_index] == MEMO_PROGRAM_ID
    ]
    # As the RPC joins them: "[length] text".
    return "; ".join(f"[{len(m)}] {m}" for m in memos) if memos else None


def _instruction_json(landed: Landed, index: int, ledger: Ledger) -> dict[str, Any]:
    """One instruction as jsonParsed renders it: parsed for the programs the RPC knows,
    partially decoded (accounts, base58 data) for the others."""
    message = landed.transaction.message
    keys = message.account_keys
    compiled = message.instructions[index]
    program = keys[compiled.program_id_index]
    accounts = [keys[i] for i in compiled.accounts]
    data = bytes(compiled.data)
    if program == TOKEN_PROGRAM_ID and data[:1] == bytes([12]):
        decoded = decode_transfer_checked(_instruction(landed, index))
        return _parsed(
            "spl-token",
            program,
            "transferChecked",
            {
                "source": str(decoded.source),
                "mint": str(decoded.mint),
                "destination": str(decoded.dest),
                "authority": str(decoded.owner),
                "tokenAmount": _ui_amount(decoded.amount, decoded.decimals),
            },
        )
    if program == TOKEN_PROGRAM_ID and data[:1] == bytes([9]):
        closed = decode_close_account(_instruction(landed, index))
        return _parsed(
            "spl-token",
            program,
            "closeAccount",
            {
                "account": str(closed.account),
                "destination": str(closed.dest),
                "owner": str(closed.owner),
            },
        )
    if program == ASSOCIATED_TOKEN_PROGRAM_ID and data in (b"", b"\x00", b"\x01"):
        return _parsed(
            "spl-associated-token-account",
            program,
            "createIdempotent" if data == b"\x01" else "create",
            {
                "source": str(accounts[0]),
                "account": str(accounts[1]),
                "wallet": str(accounts[2]),
                "mint": str(accounts[3]),
                "systemProgram": str(accounts[4]),
                "tokenProgram": str(accounts[5]),
            },
        )
    if program == MEMO_PROGRAM_ID:
        return {
            "parsed": data.decode(errors="replace"),
            "program": "spl-memo",
            "programId": str(program),
            "stackHeight": None,
        }
    return {
        "accounts": [str(a) for a in accounts],
        "data": b58encode(data),
        "programId": str(program),
        "stackHeight": None,
    }


def _instruction(landed: Landed, index: int) -> Any:
    from solders.instruction import AccountMeta, Instruction

    message = landed.transaction.message
    keys = message.account_keys
    compiled = message.instructions[index]
    return Instruction(
        keys[compiled.program_id_index],
        bytes(compiled.data),
        [
            AccountMeta(keys[i], message.is_signer(i), message.is_maybe_writable(i))
            for i in compiled.accounts
        ],
    )


def _parsed(program: str, program_id: Pubkey, kind: str, info: dict[str, Any]) -> dict[str, Any]:
    return {
        "parsed": {"info": info, "type": kind},
        "program": program,
        "programId": str(program_id),
        "stackHeight": None,
    }


def _transaction_json(landed: Landed, ledger: Ledger) -> dict[str, Any]:
    message = landed.transaction.message
    err = error_json(landed.err) if landed.err is not None else None
    return {
        "slot": landed.slot,
        "blockTime": BLOCK_TIME_BASE + landed.height // 2,
        "version": 0,
        "meta": {
            "err": err,
            "status": {"Ok": None} if err is None else {"Err": err},
            "fee": landed.fee,
            "preBalances": landed.pre_lamports,
            "postBalances": landed.post_lamports,
            "innerInstructions": [],
            "logMessages": landed.logs,
            "preTokenBalances": _token_balances(landed.pre_tokens, ledger),
            "postTokenBalances": _token_balances(landed.post_tokens, ledger),
            "rewards": [],
            "loadedAddresses": {"readonly": [], "writable": []},
            "computeUnitsConsumed": landed.units,
        },
        "transaction": {
            "signatures": [str(s) for s in landed.transaction.signatures],
            "message": {
                "accountKeys": [
                    {
                        "pubkey": str(key),
                        "signer": message.is_signer(i),
                        "writable": message.is_maybe_writable(i),
                        "source": "transaction",
                    }
                    for i, key in enumerate(message.account_keys)
                ],
                "instructions": [
                    _instruction_json(landed, i, ledger) for i in range(len(message.instructions))
                ],
                "recentBlockhash": str(message.recent_blockhash),
                "addressTableLookups": [],
            },
        },
    }


@contextmanager
def solana_rpc() -> Iterator[SolanaRpc]:
    """The server on a free loopback port, stopped on exit."""
    state = SolanaRpc()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length))
            with state.lock:
                throttled = state.throttle > 0
                state.throttle -= throttled
            if throttled:
                self._answer(
                    429,
                    {
                        "jsonrpc": "2.0",
                        "id": request.get("id"),
                        "error": {
                            "code": 429,
                            "message": "Too many requests for a specific RPC call",
                        },
                    },
                    {"Retry-After": "1"},
                )
                return
            try:
                body = {"jsonrpc": "2.0", "id": request.get("id"), "result": state.handle(request)}
            except RpcError as exc:
                body = {"jsonrpc": "2.0", "id": request.get("id"), "error": exc.body()}
            except AnswerLostError:
                self._answer(
                    503,
                    {
                        "jsonrpc": "2.0",
                        "id": request.get("id"),
                        "error": {"code": -32603, "message": "upstream timeout"},
                    },
                )
                return
            self._answer(200, body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
