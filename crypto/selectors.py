"""Reads: a user's address allocation, a user's deposits and cashouts, newest first in ``before``
pages, what cashouts hold of merchants' locked balances, where the deposit scanner of each real
EVM chain is, and what the console's home counts: cashouts waiting, Solana accounts behind."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.db import connection
from django.db.models import Count, Min, QuerySet, Sum

from core.db import ModelRows
from core.ports import LockHolding
from crypto.chains.evm import evm_served_chains
from crypto.evm.models import EvmCursor
from crypto.models import CASHOUT_WAITING, AddressAllocation, CryptoDeposit, CryptoWithdrawal
from crypto.solana.models import SolanaCursor
from merchants.models import Merchant

Row = TypeVar("Row", CryptoDeposit, CryptoWithdrawal)

_ALLOCATIONS = ModelRows(AddressAllocation)
_MERCHANT, _PLATFORM_ID = _ALLOCATIONS.quoted(["merchant", "platform_id"])
# Every ask for a deposit address reads it: written out by hand (the ORM's compilation of it cost
# several times its run).
_ALLOCATION_OF_USER = (
    f"SELECT {_ALLOCATIONS.columns('a')} FROM {_ALLOCATIONS.table('a')}"  # noqa: S608
    f" WHERE a.{_MERCHANT} = %s AND a.{_PLATFORM_ID} = %s"
)


def allocation_find(*, merchant: Merchant, platform_id: str) -> AddressAllocation | None:
    """The user's address allocation, if it has one."""
    with connection.cursor() as cursor:
        cursor.execute(
            _ALLOCATION_OF_USER,
            [
                _ALLOCATIONS.param("merchant", merchant.pk),
                _ALLOCATIONS.param("platform_id", platform_id),
            ],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    allocation: AddressAllocation = _ALLOCATIONS.build(row)
    allocation.merchant = merchant
    return allocation


def _page(
    rows: QuerySet[Row], *, before: datetime | None, limit: int
) -> tuple[list[Row], datetime | None]:
    """Rows created before ``before``, newest first. Rows sharing the boundary time all go on
    one page (it may run past ``limit``), so the next page, ``created_at < nextBefore``, skips
    none of them."""
    if before is not None:
        rows = rows.filter(created_at__lt=before)
    rows = rows.order_by("-created_at", "-id")
    page = list(rows[: limit + 1])
    if len(page) <= limit:
        return page, None
    boundary = page[limit - 1].created_at
    if page[limit].created_at == boundary:
        page = [row for row in page if row.created_at > boundary]
        page += list(rows.filter(created_at=boundary))
    else:
        page = page[:limit]
    more = rows.filter(created_at__lt=boundary).exists()
    return page, boundary if more else None


def crypto_deposits_page(
    *, merchant: Merchant, platform_id: str, before: datetime | None, limit: int
) -> tuple[list[CryptoDeposit], datetime | None]:
    rows = CryptoDeposit.objects.filter(merchant=merchant, platform_id=platform_id)
    return _page(rows, before=before, limit=limit)


def crypto_withdrawals_page(
    *, merchant: Merchant, platform_id: str, before: datetime | None, limit: int
) -> tuple[list[CryptoWithdrawal], datetime | None]:
    rows = CryptoWithdrawal.objects.filter(merchant=merchant, platform_id=platform_id)
    return _page(rows, before=before, limit=limit)


def cashout_locks() -> LockHolding:
    """What cashouts keep locked; finished ones must keep nothing."""
    held = (
        CryptoWithdrawal.objects.filter(locked__gt=0)
        .values("merchant_id")
        .annotate(total=Sum("locked"))
    )
    stale = CryptoWithdrawal.objects.filter(
        locked__gt=0,
        status__in=[
            CryptoWithdrawal.Status.COMPLETED,
            CryptoWithdrawal.Status.FAILED,
            CryptoWithdrawal.Status.REJECTED,
            CryptoWithdrawal.Status.CANCELLED,
        ],
    ).values_list("id", "status", "locked")[:100]
    return LockHolding(
        by_merchant={str(row["merchant_id"]): row["total"] for row in held},
        stale=[f"cashout {pk} is {status} but holds {locked}" for pk, status, locked in stale],
    )


@dataclass(frozen=True)
class ChainScanState:
    """Where the deposit scanner of one chain is, as its last step stored it. A chain not scanned
    yet has None everywhere; a cursor older than these columns has no first block or start."""

    chain: str
    first_block: int | None  # where scanning began (the head then): earlier blocks are history
    started_at: datetime | None
    last_scanned_block: int | None  # every transfer up to this block was observed
    head: int | None  # the node's head at the last step
    lag_blocks: int | None  # head - last_scanned_block
    lag_seconds: int | None  # the chain's time from the last block read to the head block
    last_scan_at: datetime | None  # when a step last completed


def chain_scan_state(chain: str, cursor: EvmCursor | None) -> ChainScanState:
    if cursor is None:
        return ChainScanState(chain, None, None, None, None, None, None, None)
    scanned = cursor.next_block - 1
    lag_blocks = None if cursor.head is None else max(0, cursor.head - scanned)
    lag_seconds = None
    if lag_blocks == 0:
        lag_seconds = 0
    elif cursor.head_time is not None and cursor.scanned_block_time is not None:
        lag_seconds = max(0, int((cursor.head_time - cursor.scanned_block_time).total_seconds()))
    return ChainScanState(
        chain=chain,
        first_block=cursor.first_block,
        started_at=cursor.started_at,
        last_scanned_block=scanned,
        head=cursor.head,
        lag_blocks=lag_blocks,
        lag_seconds=lag_seconds,
        last_scan_at=cursor.scanned_at,
    )


def chain_scan_states() -> list[ChainScanState]:
    """The deposit scanner of every chain the EVM gateway serves (none without it), read from
    the database only: the scanner stores the head it saw, so /health and metrics never ask a
    node."""
    chains = evm_served_chains()
    cursors = {cursor.chain: cursor for cursor in EvmCursor.objects.filter(chain__in=chains)}
    return [chain_scan_state(chain, cursors.get(chain)) for chain in chains]


@dataclass(frozen=True)
class CashoutsWaiting:
    """Cashouts in one waiting state: how many, how many past its expected time, the oldest."""

    status: str
    count: int
    late: int
    oldest_created_at: datetime | None


def cashouts_late(*, status: str, now: datetime) -> QuerySet[CryptoWithdrawal]:
    """Cashouts asked for longer ago than ``status`` is expected to last."""
    minutes = settings.CONSOLE_EXPECTED_MINUTES[f"cashout.{status}"]
    return CryptoWithdrawal.objects.filter(
        status=status, created_at__lt=now - timedelta(minutes=minutes)
    )


def cashouts_waiting(*, now: datetime) -> list[CashoutsWaiting]:
    """Each waiting state (the merchant's approval, staff's review, the broadcast): ranges of
    the partial index ``withdrawal_waiting``."""
    waiting = []
    for status in CASHOUT_WAITING:
        found = CryptoWithdrawal.objects.filter(status=status).aggregate(
            n=Count("*"), oldest=Min("created_at")
        )
        late = cashouts_late(status=status, now=now).count()
        waiting.append(CashoutsWaiting(status, found["n"], late, found["oldest"]))
    return waiting


def solana_accounts_behind(*, now: datetime) -> QuerySet[SolanaCursor]:
    """Deposit token accounts whose scan is overdue by more than the console's lag: the Solana
    scanner is behind on them (the index ``solana_cursor_due`` holds the due times)."""
    behind = now - timedelta(seconds=settings.CONSOLE_SCANNER_LAG_SECONDS)
    return SolanaCursor.objects.filter(next_scan_at__lt=behind)
