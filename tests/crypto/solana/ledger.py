"""The chain behind the recorded Solana RPC server: LiteSVM (``solders.litesvm``), the Solana
runtime as a library, which verifies signatures and runs the real SPL Token, Associated Token
Account and Memo programs on an in-memory bank. What a cluster adds around a bank is kept here:
blocks and block heights, blockhashes valid for 150 blocks (``lastValidBlockHeight``),
confirmed and finalized commitment, the signatures of each address (kept when the account
closes, and going on when it is created again), the token balances before and after each
transaction, and the ways a real cluster loses or delays transactions (dropped on the way to
the leader, held between preflight and execution, never in a block when the fee payer cannot
pay) or forgets them (a node whose ledger was cleaned up).

Sources: Solana docs "Transaction Confirmation & Expiration" (blockhash valid for 150 blocks,
the last valid block height), "Retrying Transactions" (dropped transactions, rebroadcasting),
"Commitment levels"; Solana Cookbook "Transactions" (a fee payer that cannot pay: dropped);
agave ``ledger/src/token_balances.rs`` (token balances read from the bank before and after the
batch); the SPL Token account layout (mint 0..32, owner 32..64, amount 64..72 little-endian,
165 bytes) and mint layout (decimals at byte 44) from solana-program-library
``token/program/src/state.rs``."""

import secrets
import struct
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from solders.account import Account
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata
from solders.transaction_status import (
    InstructionErrorCustom,
    TransactionErrorInstructionError,
)
from spl.token.constants import TOKEN_PROGRAM_ID
from spl.token.instructions import (
    create_idempotent_associated_token_account,
    freeze_account,
    get_associated_token_address,
    mint_to,
    transfer_checked,
)
from spl.token.models import FreezeAccountParams, MintToParams, TransferCheckedParams

MAX_PROCESSING_AGE = 150  # blocks a blockhash stays valid (Solana docs, expiration)
# Failures found before execution, while the fee payer and the message are checked: such a
# transaction takes no fee and is in no block (agave's TransactionError variants of the
# check and fee-payer stages).
NEVER_COMMITTED = {
    "AccountNotFound",
    "InsufficientFundsForFee",
    "InvalidAccountForFee",
    "BlockhashNotFound",
    "AlreadyProcessed",
    "AccountInUse",
    "AccountLoadedTwice",
    "SanitizeFailure",
    "TooManyAccountLocks",
    "SignatureFailure",
}
FIRST_HEIGHT = 200_000
SKIPPED_SLOTS = 1_234  # slots run ahead of block heights (some slots have no block)
TOKEN_ACCOUNT_SIZE = 165
MINT_SIZE = 82
DECIMALS = 6


def error_json(err: Any) -> Any:
    """A TransactionError as the RPC renders it: ``"BlockhashNotFound"``, or
    ``{"InstructionError": [index, {"Custom": code}]}`` / ``[index, "InvalidAccountData"]``."""
    if isinstance(err, TransactionErrorInstructionError):
        inner = err.err
        if isinstance(inner, InstructionErrorCustom):
            return {"InstructionError": [err.index, {"Custom": inner.code}]}
        return {"InstructionError": [err.index, str(inner).split(".")[-1]]}
    return str(err).split(".")[-1]


def error_text(err: Any) -> str:
    """As agave's ``TransactionError`` Display renders it (the preflight failure's message)."""
    if isinstance(err, TransactionErrorInstructionError):
        inner = err.err
        if isinstance(inner, InstructionErrorCustom):
            return (
                f"Error processing Instruction {err.index}: custom program error: {inner.code:#x}"
            )
        return f"Error processing Instruction {err.index}: {str(inner).split('.')[-1]}"
    if str(err).endswith("BlockhashNotFound"):
        return "Blockhash not found"
    if str(err).endswith("AlreadyProcessed"):
        return "This transaction has already been processed"
    return str(err).split(".")[-1]


@dataclass(frozen=True)
class TokenBalance:
    account_index: int
    mint: str
    owner: str
    amount: int


@dataclass
class Landed:
    """A transaction in a block."""

    signature: str
    transaction: VersionedTransaction
    height: int
    err: Any  # None when it succeeded
    fee: int
    logs: list[str]
    units: int
    pre_lamports: list[int]
    post_lamports: list[int]
    pre_tokens: list[TokenBalance]
    post_tokens: list[TokenBalance]

    @property
    def slot(self) -> int:
        return self.height + SKIPPED_SLOTS

    @property
    def keys(self) -> list[str]:
        return [str(key) for key in self.transaction.message.account_keys]


@dataclass
class Ledger:
    """The bank and the cluster around it. Every method holds the lock: the RPC server answers
    from many threads."""

    svm: LiteSVM = field(default_factory=lambda: LiteSVM().with_blockhash_check(False))
    lock: threading.RLock = field(default_factory=threading.RLock)
    height: int = FIRST_HEIGHT
    finalized_height: int = FIRST_HEIGHT
    auto_finalize: bool = True  # each new block is finalized at once; off: ``finalize()``
    blockhashes: dict[str, int] = field(default_factory=dict)  # blockhash -> last valid height
    blockhash_at: dict[int, str] = field(default_factory=dict)  # height -> its block's hash
    tip_blockhash: str = ""
    # The oldest block whose transactions the node still serves: an RPC node keeps a limited
    # ledger (``--limit-ledger-size``) and, without a long-term store, forgets what is older.
    first_available_height: int = 0
    landed: dict[str, Landed] = field(default_factory=dict)
    by_address: dict[str, list[str]] = field(default_factory=dict)  # oldest first
    # How a real cluster loses or delays transactions (the tests switch these):
    drop_sends: bool = False  # accepted, never reach a leader
    hold_sends: bool = False  # accepted, kept until ``release()`` (after preflight passed)
    held: list[VersionedTransaction] = field(default_factory=list)
    issuer: Keypair = field(default_factory=Keypair)
    mints: dict[str, str] = field(default_factory=dict)  # symbol -> mint

    def __post_init__(self) -> None:
        self.svm.airdrop(self.issuer.pubkey(), 1_000 * 10**9)
        self._new_block()
        for symbol in ("USDC", "USDT"):
            self.mints[symbol] = self._create_mint()

    # -- blocks

    def _new_block(self) -> None:
        self.height += 1
        blockhash = str(Hash(secrets.token_bytes(32)))
        self.blockhashes[blockhash] = self.height + MAX_PROCESSING_AGE
        self.blockhash_at[self.height] = blockhash
        self.tip_blockhash = blockhash
        if self.auto_finalize:
            self.finalized_height = self.height

    def advance(self, blocks: int) -> None:
        """Empty blocks: time passes, blockhashes expire."""
        with self.lock:
            for _ in range(blocks):
                self._new_block()

    def finalize(self) -> None:
        with self.lock:
            self.finalized_height = self.height

    def latest_blockhash(self, *, finalized: bool = False) -> tuple[str, int]:
        """The newest block's hash (or the newest finalized one's) and its last valid height."""
        with self.lock:
            blockhash = (
                self.blockhash_at[self.finalized_height] if finalized else self.tip_blockhash
            )
            return blockhash, self.blockhashes[blockhash]

    def forget_before(self, height: int) -> None:
        """The node no longer serves transactions of blocks below ``height`` (its ledger was
        cleaned up): their signatures, statuses and bodies are unknown to it."""
        with self.lock:
            self.first_available_height = height

    def served(self, landed: Landed) -> bool:
        return landed.height >= self.first_available_height

    def blockhash_valid(self, blockhash: str) -> bool:
        """Can a transaction naming it still go into the next block?"""
        last_valid = self.blockhashes.get(blockhash)
        return last_valid is not None and self.height + 1 <= last_valid

    # -- accounts

    def account(self, address: str) -> Account | None:
        with self.lock:
            return self.svm.get_account(Pubkey.from_string(address))

    def token_account(self, address: str) -> tuple[str, str, int] | None:
        """(mint, owner, amount) of an SPL token account."""
        found = self.account(address)
        if (
            found is None
            or found.owner != TOKEN_PROGRAM_ID
            or len(found.data) != TOKEN_ACCOUNT_SIZE
        ):
            return None
        data = bytes(found.data)
        amount = struct.unpack_from("<Q", data, 64)[0]
        return str(Pubkey.from_bytes(data[:32])), str(Pubkey.from_bytes(data[32:64])), amount

    def decimals(self, mint: str) -> int:
        found = self.account(mint)
        assert found is not None
        return bytes(found.data)[44]

    def token_balance(self, owner: str, symbol: str) -> Decimal:
        """Tokens ``owner``'s associated account of the mint holds (0 when it has none)."""
        address = self.ata(owner, symbol)
        held = self.token_account(address)
        return Decimal(held[2] if held else 0).scaleb(-DECIMALS)

    def ata(self, owner: str, symbol: str) -> str:
        return str(
            get_associated_token_address(
                Pubkey.from_string(owner), Pubkey.from_string(self.mints[symbol])
            )
        )

    def rent(self, size: int) -> int:
        with self.lock:
            return int(self.svm.minimum_balance_for_rent_exemption(size))

    def _create_mint(self) -> str:
        mint = Keypair().pubkey()
        authority = bytes(self.issuer.pubkey())
        # COption<Pubkey> mint authority, supply, decimals, is_initialized, COption freeze
        # authority: the issuer can freeze accounts, as Circle can for USDC.
        data = struct.pack("<I32sQBBI32s", 1, authority, 0, DECIMALS, 1, 1, authority)
        self.svm.set_account(
            mint,
            Account(
                lamports=self.svm.minimum_balance_for_rent_exemption(MINT_SIZE),
                data=data,
                owner=TOKEN_PROGRAM_ID,
                executable=False,
            ),
        )
        return str(mint)

    # -- the test's hands: wallets and tokens moved by real transactions

    def wallet(self, lamports: int = 10**9) -> Keypair:
        keypair = Keypair()
        self.airdrop(str(keypair.pubkey()), lamports)
        return keypair

    def airdrop(self, address: str, lamports: int) -> None:
        with self.lock:
            self.svm.airdrop(Pubkey.from_string(address), lamports)

    def _run(self, payer: Keypair, instructions: list[Instruction], *signers: Keypair) -> Landed:
        message = MessageV0.try_compile(
            payer.pubkey(), instructions, [], Hash.from_string(self.latest_blockhash()[0])
        )
        landed = self.land(VersionedTransaction(message, [payer, *signers]))
        assert landed is not None
        assert landed.err is None, landed.logs
        return landed

    def mint(self, owner: str, symbol: str, amount: str) -> str:
        """The issuer mints tokens into ``owner``'s associated account (created if missing)."""
        mint = Pubkey.from_string(self.mints[symbol])
        wallet = Pubkey.from_string(owner)
        destination = get_associated_token_address(wallet, mint)
        landed = self._run(
            self.issuer,
            [
                create_idempotent_associated_token_account(self.issuer.pubkey(), wallet, mint),
                mint_to(
                    MintToParams(
                        program_id=TOKEN_PROGRAM_ID,
                        mint=mint,
                        dest=destination,
                        mint_authority=self.issuer.pubkey(),
                        amount=int(Decimal(amount).scaleb(DECIMALS)),
                    )
                ),
            ],
        )
        return landed.signature

    def freeze(self, owner: str, symbol: str) -> None:
        """The issuer freezes ``owner``'s token account: transfers into it fail."""
        mint = Pubkey.from_string(self.mints[symbol])
        wallet = Pubkey.from_string(owner)
        self._run(
            self.issuer,
            [
                create_idempotent_associated_token_account(self.issuer.pubkey(), wallet, mint),
                freeze_account(
                    FreezeAccountParams(
                        program_id=TOKEN_PROGRAM_ID,
                        account=get_associated_token_address(wallet, mint),
                        mint=mint,
                        authority=self.issuer.pubkey(),
                    )
                ),
            ],
        )

    def payment(
        self, payer: Keypair, to: str, symbol: str, amount: str, *, create: bool = True
    ) -> VersionedTransaction:
        """A deposit as a wallet (Phantom, an exchange) makes it: to the owner's associated
        token account, created in the same transaction when ``create``; to ``to`` itself when
        it is a token account."""
        mint = Pubkey.from_string(self.mints[symbol])
        recipient = Pubkey.from_string(to)
        instructions = []
        if self.token_account(to) is None:
            if create:
                instructions.append(
                    create_idempotent_associated_token_account(payer.pubkey(), recipient, mint)
                )
            destination = get_associated_token_address(recipient, mint)
        else:
            destination = recipient
        instructions.append(
            transfer_checked(
                TransferCheckedParams(
                    program_id=TOKEN_PROGRAM_ID,
                    source=get_associated_token_address(payer.pubkey(), mint),
                    mint=mint,
                    dest=destination,
                    owner=payer.pubkey(),
                    amount=int(Decimal(amount).scaleb(DECIMALS)),
                    decimals=DECIMALS,
                )
            )
        )
        message = MessageV0.try_compile(
            payer.pubkey(), instructions, [], Hash.from_string(self.latest_blockhash()[0])
        )
        return VersionedTransaction(message, [payer])

    def pay(self, payer: Keypair, to: str, symbol: str, amount: str, *, create: bool = True) -> str:
        landed = self.land(self.payment(payer, to, symbol, amount, create=create))
        assert landed is not None
        assert landed.err is None, landed.logs
        return landed.signature

    # -- transactions

    def _token_balances(self, keys: list[str]) -> list[TokenBalance]:
        found = []
        for index, key in enumerate(keys):
            held = self.token_account(key)
            if held is not None:
                found.append(TokenBalance(index, held[0], held[1], held[2]))
        return found

    def simulate(self, transaction: VersionedTransaction) -> FailedTransactionMetadata | None:
        with self.lock:
            result = self.svm.simulate_transaction(transaction)
            return result if isinstance(result, FailedTransactionMetadata) else None

    def accept(self, transaction: VersionedTransaction) -> None:
        """A transaction the RPC node forwarded: it lands in the next block, unless the cluster
        loses it (``drop_sends``) or it waits (``hold_sends``)."""
        with self.lock:
            if self.drop_sends:
                return
            if self.hold_sends:
                self.held.append(transaction)
                return
            self.land(transaction)

    def release(self) -> list[Landed]:
        """The held transactions reach the leader, in order."""
        with self.lock:
            held, self.held = self.held, []
            self.hold_sends = False
            return [landed for t in held if (landed := self.land(t)) is not None]

    def land(self, transaction: VersionedTransaction) -> Landed | None:
        """Execute in a new block. None when it cannot be in one: its blockhash expired, it is
        already in one (the cluster deduplicates by signature), or its fee payer cannot pay
        (such a transaction is dropped, never committed: Solana Cookbook "Transactions", Fees;
        agave commits failed transactions only once their fee was taken)."""
        with self.lock:
            signature = str(transaction.signatures[0])
            blockhash = str(transaction.message.recent_blockhash)
            if signature in self.landed or not self.blockhash_valid(blockhash):
                return None
            keys = [str(key) for key in transaction.message.account_keys]
            pre_lamports = [self.svm.get_balance(Pubkey.from_string(k)) or 0 for k in keys]
            pre_tokens = self._token_balances(keys)
            result = self.svm.send_transaction(transaction)
            if isinstance(result, FailedTransactionMetadata):
                err, meta = result.err(), result.meta()
                if str(error_json(err)) in NEVER_COMMITTED:
                    return None
            else:
                err, meta = None, result
            self._new_block()
            landed = Landed(
                signature=signature,
                transaction=transaction,
                height=self.height,
                err=err,
                fee=int(meta.fee()),
                logs=list(meta.logs()),
                units=int(meta.compute_units_consumed()),
                pre_lamports=pre_lamports,
                post_lamports=[self.svm.get_balance(Pubkey.from_string(k)) or 0 for k in keys],
                pre_tokens=pre_tokens,
                post_tokens=self._token_balances(keys),
            )
            self.landed[signature] = landed
            for key in keys:
                self.by_address.setdefault(key, []).append(signature)
            return landed

    def status_of(self, signature: str, *, history: bool) -> Landed | None:
        with self.lock:
            landed = self.landed.get(signature)
            if landed is None or not self.served(landed):
                return None
            # Without searchTransactionHistory only the recent status cache answers.
            if not history and self.height - landed.height > MAX_PROCESSING_AGE:
                return None
            return landed

    def finalized(self, landed: Landed) -> bool:
        return landed.height <= self.finalized_height
