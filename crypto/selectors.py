"""Reads: a user's deposits and cashouts, newest first in ``before`` pages, and what cashouts
hold of merchants' locked balances."""

from datetime import datetime
from typing import TypeVar

from django.db.models import QuerySet, Sum

from crypto.evm.models import EvmCursor
from crypto.models import CryptoDeposit, CryptoWithdrawal
from merchants.models import Merchant
from wallet.selectors import LockHolding

Row = TypeVar("Row", CryptoDeposit, CryptoWithdrawal)


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


def evm_scanner_cursors() -> list[tuple[str, int, datetime]]:
    """Each scanned EVM chain's cursor: (chain, the first block not read yet, when it last
    moved). The scanner's lag behind the head is what its last step saw (core.metrics)."""
    rows = EvmCursor.objects.order_by("chain").values_list("chain", "next_block", "updated_at")
    return list(rows)
