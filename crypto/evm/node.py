"""The JSON-RPC node of each EVM chain (``CRYPTO_<CHAIN>_RPC_URL``) through web3.py, reduced to
what the gateway asks: heads and blocks, token Transfer logs, receipts, nonces, balances, fees,
gas estimates and raw sends. Every failure of the node or the network is a ChainError.

A node is used only once it proved to be the configured network's chain: its ``eth_chainId`` is
the network's and each token contract has code there (``ChainMismatchError`` otherwise, nothing
read from it or signed for it). Checked at each process's first contact, then remembered.

Each JSON-RPC exchange ends within ``RPC_TIMEOUT_SECONDS`` whole (``core.http.deadline``:
web3's read timeout alone bounds each read, not a node that drips its answer)."""

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import requests
from django.conf import settings
from eth_abi import encode
from eth_utils import function_signature_to_4byte_selector, keccak, to_checksum_address
from web3 import Web3
from web3.exceptions import ContractLogicError, TransactionNotFound, Web3Exception
from web3.providers.rpc import HTTPProvider
from web3.types import RPCEndpoint, RPCResponse

from core.http import deadline, deadline_session
from crypto.chains.base import ChainError
from crypto.networks import EVM_CHAINS, network

TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
TRANSFER_CALL = function_signature_to_4byte_selector("transfer(address,uint256)")
BALANCE_OF_CALL = function_signature_to_4byte_selector("balanceOf(address)")
RPC_TIMEOUT_SECONDS = 10


class CallRevertedError(ChainError):
    """The node says the call would revert: it was not signed, nothing went out."""


class ChainMismatchError(ChainError):
    """The node is not the configured network's chain (another chain id, or a token contract
    without code there): the gateway refuses to read from it or sign for it."""


@dataclass(frozen=True)
class BlockHeader:
    number: int
    hash: str
    timestamp: int  # the block's own time, seconds since the epoch


@dataclass(frozen=True)
class Fees:
    max_fee_per_gas: int
    max_priority_fee_per_gas: int


@dataclass(frozen=True)
class TokenTransfer:
    """One ERC-20 Transfer log."""

    contract: str
    sender: str
    to: str
    value: int  # raw token units
    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str


@dataclass(frozen=True)
class Receipt:
    block_number: int
    succeeded: bool


def erc20_transfer_data(*, to: str, value: int) -> str:
    return "0x" + (TRANSFER_CALL + encode(["address", "uint256"], [to, value])).hex()


def _hex(value: Any) -> str:
    return "0x" + bytes(value).hex()


def _address_topic(topic: Any) -> str:
    return to_checksum_address(bytes(topic)[-20:])


@contextmanager
def _rpc(what: str) -> Iterator[None]:
    try:
        yield
    except ContractLogicError as exc:
        raise CallRevertedError(f"{what}: {exc}") from exc
    except (Web3Exception, requests.RequestException, OSError, ValueError) as exc:
        raise ChainError(f"{what}: {exc}") from exc


class _DeadlineProvider(HTTPProvider):
    """web3's HTTP provider, each exchange whole within RPC_TIMEOUT_SECONDS and never tried
    again (the sweeps retry on their own schedule; a request must not stall a worker)."""

    def __init__(self, url: str) -> None:
        super().__init__(url, request_kwargs={"timeout": RPC_TIMEOUT_SECONDS})
        self.url = url
        self._sessions = threading.local()  # requests.Session is not thread-safe

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        session: requests.Session | None = getattr(self._sessions, "session", None)
        if session is None:
            session = self._sessions.session = deadline_session()
        with deadline(RPC_TIMEOUT_SECONDS):
            response = session.post(
                self.url,
                data=self.encode_rpc_request(method, params),
                **self.get_request_kwargs(),
            )
            response.raise_for_status()
            answer = response.content
        return self.decode_rpc_response(answer)


class Node:
    """One chain's node. Thread-safe: its provider keeps a session per thread."""

    def __init__(self, url: str) -> None:
        self.w3 = Web3(_DeadlineProvider(url))
        self._chain_id: int | None = None
        # (chain id, token contracts) this node was found to serve: checked once per process.
        self.verified: set[tuple[int | None, tuple[str, ...]]] = set()

    def chain_id(self) -> int:
        if self._chain_id is None:
            with _rpc("eth_chainId"):
                self._chain_id = int(self.w3.eth.chain_id)
        return self._chain_id

    def head(self) -> int:
        with _rpc("eth_blockNumber"):
            return int(self.w3.eth.block_number)

    def block(self, number: int | str) -> BlockHeader | None:
        """The block the chain has at this height now (or ``"latest"``); None above its head."""
        at = hex(number) if isinstance(number, int) else number
        with _rpc("eth_getBlockByNumber"):
            block = self.w3.provider.make_request(RPCEndpoint("eth_getBlockByNumber"), [at, False])
        if "error" in block:
            raise ChainError(f"eth_getBlockByNumber: {block['error']}")
        found = block.get("result")
        if not found:
            return None
        return BlockHeader(
            number=int(found["number"], 16),
            hash=str(found["hash"]),
            timestamp=int(found["timestamp"], 16),
        )

    def block_hash(self, number: int) -> str | None:
        """The hash the chain has at this height now; None above its head."""
        header = self.block(number)
        return header.hash if header else None

    def latest(self) -> BlockHeader:
        """The head block: its number and its time."""
        header = self.block("latest")
        if header is None:
            raise ChainError("eth_getBlockByNumber: the node has no latest block")
        return header

    def has_code(self, address: str) -> bool:
        """A contract is deployed at ``address`` (not an account without code)."""
        with _rpc("eth_getCode"):
            return len(bytes(self.w3.eth.get_code(address))) > 0  # type: ignore[arg-type]

    def transfers(self, *, contracts: Sequence[str], start: int, end: int) -> list[TokenTransfer]:
        """Transfer logs of these token contracts in blocks ``start`` to ``end``, in chain order."""
        with _rpc("eth_getLogs"):
            logs = self.w3.eth.get_logs(
                {
                    "address": [to_checksum_address(c) for c in contracts],
                    "fromBlock": start,
                    "toBlock": end,
                    "topics": [TRANSFER_TOPIC],
                }
            )
        found = []
        for log in logs:
            topics = log["topics"]
            if len(topics) != 3 or log.get("removed"):
                continue  # not an ERC-20 Transfer (an ERC-721 one indexes its third value)
            found.append(
                TokenTransfer(
                    contract=to_checksum_address(log["address"]),
                    sender=_address_topic(topics[1]),
                    to=_address_topic(topics[2]),
                    value=int.from_bytes(bytes(log["data"]), "big"),
                    tx_hash=_hex(log["transactionHash"]),
                    log_index=int(log["logIndex"]),
                    block_number=int(log["blockNumber"]),
                    block_hash=_hex(log["blockHash"]),
                )
            )
        return sorted(found, key=lambda t: (t.block_number, t.log_index))

    def receipt(self, tx_hash: str) -> Receipt | None:
        """None while the transaction is in no block of the chain."""
        with _rpc("eth_getTransactionReceipt"):
            try:
                found = self.w3.eth.get_transaction_receipt(tx_hash)  # type: ignore[arg-type]
            except TransactionNotFound:
                return None
        return Receipt(block_number=int(found["blockNumber"]), succeeded=found["status"] == 1)

    def knows(self, tx_hash: str) -> bool:
        """The node has the transaction, in a block or waiting in its pool."""
        with _rpc("eth_getTransactionByHash"):
            try:
                self.w3.eth.get_transaction(tx_hash)  # type: ignore[arg-type]
            except TransactionNotFound:
                return False
        return True

    def nonce(self, address: str, *, at: int | str = "pending") -> int:
        """How many transactions ``address`` has sent as of block ``at`` (or counting the pool)."""
        with _rpc("eth_getTransactionCount"):
            return int(self.w3.eth.get_transaction_count(address, at))  # type: ignore[arg-type]

    def balance(self, address: str) -> int:
        with _rpc("eth_getBalance"):
            return int(self.w3.eth.get_balance(address))  # type: ignore[arg-type]

    def token_balance(self, *, contract: str, address: str) -> int:
        data = BALANCE_OF_CALL + encode(["address"], [address])
        with _rpc("balanceOf"):
            answer = self.w3.eth.call({"to": contract, "data": data})
        return int.from_bytes(bytes(answer), "big")

    def fees(self) -> Fees:
        """EIP-1559 fees that stay valid while the base fee doubles."""
        with _rpc("fees"):
            base = int(self.w3.eth.get_block("latest").get("baseFeePerGas", 0))
            tip = int(self.w3.eth.max_priority_fee)
        return Fees(max_fee_per_gas=2 * base + tip, max_priority_fee_per_gas=tip)

    def estimate_gas(self, *, sender: str, to: str, value: int, data: str) -> int:
        """Raises CallRevertedError when the call would fail."""
        call = {"from": sender, "to": to, "value": value, "data": data}
        with _rpc("eth_estimateGas"):
            return int(self.w3.eth.estimate_gas(call))  # type: ignore[arg-type]

    def send_raw(self, raw: str) -> None:
        with _rpc("eth_sendRawTransaction"):
            self.w3.eth.send_raw_transaction(raw)  # type: ignore[arg-type]


@cache
def _node(url: str) -> Node:
    return Node(url)


def evm_node(chain: str) -> Node:
    """The chain's node, once it proved to be the configured network's chain. Raises
    ChainMismatchError when it is not, ChainError when it cannot be asked."""
    url = settings.CRYPTO_RPC_URLS.get(chain)
    if not url:
        raise ChainError(f"no node is configured for {chain} (CRYPTO_{chain}_RPC_URL)")
    node = _node(url)
    _verify(node, chain)
    return node


def _verify(node: Node, chain: str) -> None:
    """The node answers the network's chain id and has code at each token contract. The first
    contact of a process asks it (1 + one per token calls); a success is remembered, and so is
    the chain id it answered, so a node on the wrong chain is refused without asking again."""
    net = network(chain)
    contracts = tuple(sorted(token.contract for token in net.tokens.values()))
    if (net.chain_id, contracts) in node.verified:
        return
    setting = f"CRYPTO_{chain}_RPC_URL"
    answered = node.chain_id()
    if answered != net.chain_id:
        raise ChainMismatchError(
            f"the node of {setting} is on chain id {answered}, but CRYPTO_NETWORK="
            f"{settings.CRYPTO_NETWORK} makes {chain} {net.name} (chain id {net.chain_id}): "
            "nothing is read from it or signed for it"
        )
    for token in net.tokens.values():
        if not node.has_code(token.contract):
            raise ChainMismatchError(
                f"{net.name} has no contract at {token.contract}, the {token.symbol} token of "
                f"CRYPTO_{chain}_TOKENS or the network (asked the node of {setting}): "
                "nothing is read from it or signed for it"
            )
    node.verified.add((net.chain_id, contracts))


def evm_chains_configured() -> tuple[str, ...]:
    """The EVM chains with a node (CRYPTO_<CHAIN>_RPC_URL)."""
    return tuple(chain for chain in EVM_CHAINS if settings.CRYPTO_RPC_URLS.get(chain))
