"""A real local EVM node for the tests: anvil (from the npm registry, `npm ci` in this folder),
started on a port of its own choosing and stopped after the test, with the test token compiled
from TestToken.sol by solcjs at the start of the session.

Anvil's dev accounts come from the same public test mnemonic the sandbox derives from, so the
hot wallet (HD index 0) starts with 10,000 ETH. The node answers Sepolia's chain id, the ETH
chain of the network the tests configure (testnet): the gateway refuses a node on any other
chain. The tests move the chain with anvil's own RPCs (``anvil_mine``,
``evm_snapshot``/``evm_revert``, ``evm_setAutomine``, ``anvil_setBalance``) instead of waiting
for blocks."""

import json
import re
import subprocess
import time
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

HERE = Path(__file__).resolve().parent
ANVIL = HERE / "node_modules" / ".bin" / "anvil"
DEADLINE_SECONDS = 30.0
LISTENING = re.compile(r"Listening on 127\.0\.0\.1:(\d+)")
GWEI = 10**9
SEPOLIA = 11155111


@cache
def compiled_token() -> dict[str, Any]:
    """{abi, bytecode} of TestToken.sol, compiled here (solcjs, about 3 seconds)."""
    if not (HERE / "node_modules" / "solc").is_dir() or not ANVIL.exists():
        raise RuntimeError(
            f"The EVM tests need anvil and solc: run `npm ci --ignore-scripts` in {HERE}"
        )
    built = subprocess.run(
        ["node", "compile.cjs", "TestToken.sol"],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if built.returncode != 0:
        raise RuntimeError(f"solc failed:\n{built.stderr}")
    return json.loads(built.stdout)["TestToken"]


class Anvil:
    """One anvil process with its own log file."""

    def __init__(self, log: Path, *, chain_id: int = SEPOLIA) -> None:
        self.log = log
        self.chain_id = chain_id
        self.popen: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> "Anvil":
        with self.log.open("wb") as out:
            self.popen = subprocess.Popen(
                [
                    *(str(ANVIL), "--host", "127.0.0.1", "--port", "0", "--accounts", "10"),
                    *("--chain-id", str(self.chain_id)),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < deadline:
            found = LISTENING.search(self.log.read_text(errors="replace"))
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}"
                return self
            if self.popen.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"anvil did not start:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=DEADLINE_SECONDS)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


class Chain:
    """The test's hands on the node: accounts, the tokens, blocks and reorganisations."""

    def __init__(self, anvil: Anvil) -> None:
        self.anvil = anvil
        url = anvil.url
        self.url = url
        self.w3 = Web3(Web3.HTTPProvider(url))
        self.automining = True
        self.issuer = self.funded_account()
        abi = compiled_token()["abi"]
        self.usdc = self.w3.eth.contract(address=self.deploy("USD Coin", "USDC", 6), abi=abi)
        self.usdt = self.w3.eth.contract(address=self.deploy("Tether USD", "USDT", 6), abi=abi)

    # -- raw RPC

    def rpc(self, method: str, *params: Any) -> Any:
        answer = self.w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
        assert "error" not in answer, answer
        return answer.get("result")

    def head(self) -> int:
        return int(self.w3.eth.block_number)

    def mine(self, blocks: int = 1) -> None:
        self.rpc("anvil_mine", hex(blocks))

    def automine(self, on: bool) -> None:
        self.rpc("evm_setAutomine", on)
        self.automining = on

    def mined(self, tx_hash: str) -> Any:
        """The receipt, once anvil's automine has put the transaction in a block."""
        return self.w3.eth.wait_for_transaction_receipt(
            tx_hash, timeout=DEADLINE_SECONDS, poll_latency=0.01
        )

    def settle(self) -> None:
        """Automining: wait until every transaction sent so far is in a block."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while self.pool():
            assert time.monotonic() < deadline, f"still pending: {self.pool()}"
            time.sleep(0.01)

    def snapshot(self) -> str:
        return str(self.rpc("evm_snapshot"))

    def revert(self, snapshot: str) -> None:
        """The chain back to the snapshot: blocks and transactions since are gone (a reorg)."""
        assert self.rpc("evm_revert", snapshot) is True

    def set_balance(self, address: str, wei: int) -> None:
        self.rpc("anvil_setBalance", address, hex(wei))

    def pool(self) -> list[str]:
        """Hashes of the transactions waiting in the node's pool."""
        content = self.rpc("txpool_content")["pending"]
        return [tx["hash"] for by_nonce in content.values() for tx in by_nonce.values()]

    def knows(self, tx_hash: str) -> bool:
        return self.rpc("eth_getTransactionByHash", tx_hash) is not None

    def receipt(self, tx_hash: str) -> Any:
        return self.rpc("eth_getTransactionReceipt", tx_hash)

    # -- accounts and tokens

    def funded_account(self) -> LocalAccount:
        account: LocalAccount = Account.create()
        self.set_balance(account.address, 100 * 10**18)
        return account

    def send(self, account: LocalAccount, call: Any = None, *, tip_gwei: int = 1, **tx: Any) -> str:
        """Sign and send from ``account``: a contract call (``call``) or a plain transfer."""
        base = int(self.w3.eth.get_block("latest")["baseFeePerGas"])
        fields = {
            "from": account.address,
            "nonce": self.w3.eth.get_transaction_count(account.address, "pending"),
            "maxPriorityFeePerGas": tip_gwei * GWEI,
            "maxFeePerGas": 3 * base + tip_gwei * GWEI,
            "chainId": self.w3.eth.chain_id,
            **tx,
        }
        if call is not None:
            fields.setdefault("gas", 200_000)
            fields = call.build_transaction(fields)
        else:
            fields.setdefault("gas", 21_000)
        signed = account.sign_transaction(fields)
        tx_hash = "0x" + bytes(self.w3.eth.send_raw_transaction(signed.raw_transaction)).hex()
        if self.automining:
            self.mined(tx_hash)
        return tx_hash

    def deploy(self, name: str, symbol: str, decimals: int) -> str:
        built = compiled_token()
        factory = self.w3.eth.contract(abi=built["abi"], bytecode=built["bytecode"])
        tx_hash = self.send(self.issuer, factory.constructor(name, symbol, decimals), gas=2_000_000)
        return Web3.to_checksum_address(self.mined(tx_hash)["contractAddress"])

    @staticmethod
    def units(amount: str) -> int:
        return int(Decimal(amount).scaleb(6))

    def mint(self, token: Any, to: str, amount: str) -> str:
        return self.send(self.issuer, token.functions.mint(to, self.units(amount)))

    def pay(self, token: Any, payer: LocalAccount, to: str, amount: str) -> str:
        """A deposit as a wallet makes it: an ERC-20 transfer from the payer's own address."""
        return self.send(payer, token.functions.transfer(to, self.units(amount)))

    def block(self, token: Any, address: str, *, tip_gwei: int = 1) -> str:
        return self.send(self.issuer, token.functions.setBlocked(address, True), tip_gwei=tip_gwei)

    def balance_of(self, token: Any, address: str) -> Decimal:
        return Decimal(token.functions.balanceOf(address).call()).scaleb(-6)
