"""The deposit scanner of an EVM chain: token Transfer logs to deposit addresses, read with
``eth_getLogs`` over block ranges from a cursor kept per chain.

A step reads the next range up to the head and hands each transfer to ``observe`` (the deposit
service, given by the task that runs the scan; idempotent per transaction and log index), then
moves the cursor past the range in one transaction with the hash of the range's last block. A
restart in the middle reads the same range again: the same deposits come back, none twice, and no
block is skipped, since the cursor only moves once every transfer of its range was observed. A step
whose start no longer follows the hash kept for the block before it found a reorganisation: the
cursor goes back to the newest kept block the chain still has, and the replaced blocks are read
again. Confirmations are counted from the head by the deposit sweep, through the gateway."""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from core import clock
from crypto.chains.base import ChainError, DepositObserver, DepositTarget
from crypto.evm.models import EvmBlock, EvmCursor, EvmTransferLog
from crypto.evm.node import BlockHeader, ChainMismatchError, Node, TokenTransfer, evm_node
from crypto.models import AddressAllocation
from crypto.networks import Token, network

logger = logging.getLogger(__name__)

KEPT_BLOCKS = 64  # range ends remembered per chain, to find where a reorganisation forked


@dataclass(frozen=True)
class ScanStep:
    start: int
    end: int  # last block read; start - 1 when there was nothing new
    transfers: int  # transfers to deposit addresses observed
    rewound_to: int | None = None  # a reorganisation sent the cursor back here


def _cursor(chain: str, node: Node) -> EvmCursor:
    """The chain's cursor; the first scan starts at the head (earlier blocks are history)."""
    cursor = EvmCursor.objects.filter(chain=chain).first()
    if cursor is not None:
        return cursor
    head = node.head()
    now = clock.now()
    cursor, _ = EvmCursor.objects.get_or_create(
        chain=chain,
        defaults={"next_block": head, "first_block": head, "started_at": now, "updated_at": now},
    )
    return cursor


def _chain_time(block: BlockHeader) -> datetime:
    return datetime.fromtimestamp(block.timestamp, tz=UTC)


def _fork_point(chain: str, node: Node) -> int | None:
    """The newest kept range end the chain still has, or None when it has none of them."""
    for kept in EvmBlock.objects.filter(chain=chain).order_by("-number"):
        if node.block_hash(kept.number) == kept.hash:
            return kept.number
    return None


def _rewind(chain: str, cursor: EvmCursor, node: Node) -> int:
    fork = _fork_point(chain, node)
    oldest = EvmBlock.objects.filter(chain=chain).order_by("number").first()
    # Deeper than every kept block: read again from the oldest one (a rescan is harmless).
    back_to = fork + 1 if fork is not None else (oldest.number if oldest else cursor.next_block)
    with transaction.atomic():
        moved = EvmCursor.objects.filter(chain=chain, next_block=cursor.next_block).update(
            next_block=back_to, updated_at=clock.now()
        )
        if moved:
            EvmBlock.objects.filter(chain=chain, number__gte=back_to).delete()
    logger.warning("%s reorganised: scanning again from block %s", chain, back_to)
    return back_to


def _read(
    node: Node, tokens: list[Token], start: int, end: int
) -> tuple[BlockHeader, list[TokenTransfer]]:
    """The transfers of ``start``..``end`` with the block ``end``; of the first half of the
    range when the node refuses it (too many results), down to one block. The block's hash is
    read before and after the logs: the same twice, the logs are of the chain that ends in it."""
    contracts = [token.contract for token in tokens]
    while True:
        before = node.block(end)
        try:
            transfers = node.transfers(contracts=contracts, start=start, end=end)
        except ChainError:
            if end == start:
                raise
            end = start + (end - start) // 2
            continue
        after = node.block(end)
        if before is None or after is None or after.hash != before.hash:
            raise ChainError(f"block {end} changed while it was read: the next step reads again")
        return after, transfers


def evm_deposits_scan_step(*, chain: str, observe: DepositObserver) -> ScanStep:
    """Read the next range of blocks of ``chain``. Network I/O, then short transactions."""
    node = evm_node(chain)
    cursor = _cursor(chain, node)
    start = cursor.next_block
    last = EvmBlock.objects.filter(chain=chain, number=start - 1).first()
    if last is not None and node.block_hash(last.number) != last.hash:
        return ScanStep(
            start=start, end=start - 1, transfers=0, rewound_to=_rewind(chain, cursor, node)
        )
    latest = node.latest()
    head = latest.number
    seen = {"head": head, "head_time": _chain_time(latest)}
    if start > head:
        EvmCursor.objects.filter(chain=chain).update(scanned_at=clock.now(), **seen)
        return ScanStep(start=start, end=start - 1, transfers=0)
    tokens = list(network(chain).tokens.values())
    end = min(head, start + max(1, settings.CRYPTO_EVM_SCAN_BLOCKS) - 1)
    end_block, transfers = _read(node, tokens, start, end)
    end = end_block.number
    observed = _observe(chain, tokens, transfers, head, observe)
    now = clock.now()
    with transaction.atomic():
        moved = EvmCursor.objects.filter(chain=chain, next_block=start).update(
            next_block=end + 1,
            updated_at=now,
            scanned_at=now,
            scanned_block_time=_chain_time(end_block),
            **seen,
        )
        if moved:
            EvmBlock.objects.update_or_create(
                chain=chain, number=end, defaults={"hash": end_block.hash}
            )
            stale = EvmBlock.objects.filter(chain=chain).order_by("-number")[KEPT_BLOCKS:]
            EvmBlock.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()
    return ScanStep(start=start, end=end, transfers=observed)


def _observe(
    chain: str,
    tokens: list[Token],
    transfers: list[TokenTransfer],
    head: int,
    observe: DepositObserver,
) -> int:
    """Each transfer to a deposit address, to ``observe`` (one transaction each)."""
    by_contract = {token.contract.lower(): token for token in tokens}
    owners = {
        allocation.evm_address: allocation
        for allocation in AddressAllocation.objects.filter(
            evm_address__in={transfer.to for transfer in transfers}
        ).select_related("merchant")
    }
    observed = 0
    for transfer in transfers:
        allocation = owners.get(transfer.to)
        token = by_contract.get(transfer.contract.lower())
        if allocation is None or token is None or transfer.value <= 0:
            continue
        EvmTransferLog.objects.update_or_create(
            chain=chain,
            tx_hash=transfer.tx_hash,
            log_index=transfer.log_index,
            defaults={"block_number": transfer.block_number, "block_hash": transfer.block_hash},
        )
        observe(
            chain=chain,
            token=token.symbol,
            target=DepositTarget(allocation, allocation.evm_address or "", ""),
            tx_hash=transfer.tx_hash,
            event_index=transfer.log_index,
            from_address=transfer.sender,
            amount_crypto=Decimal(transfer.value).scaleb(-token.decimals),
            confirmations=max(0, head - transfer.block_number + 1),
        )
        observed += 1
    return observed


def evm_deposits_scan(*, chain: str, observe: DepositObserver, max_steps: int = 20) -> int:
    """Scan until the head (or ``max_steps`` ranges); returns the transfers observed."""
    observed = 0
    for _ in range(max_steps):
        step = evm_deposits_scan_step(chain=chain, observe=observe)
        observed += step.transfers
        if step.end < step.start and step.rewound_to is None:
            break
    return observed


def evm_deposits_scan_all(*, chains: tuple[str, ...], observe: DepositObserver) -> int:
    """Every served chain in turn; a chain whose node fails waits for the next run."""
    observed = 0
    for chain in chains:
        try:
            observed += evm_deposits_scan(chain=chain, observe=observe)
        except ChainMismatchError as exc:
            logger.error("%s not scanned: %s", chain, exc)
        except ChainError as exc:
            logger.warning("%s scan stopped: %s", chain, exc)
    return observed
