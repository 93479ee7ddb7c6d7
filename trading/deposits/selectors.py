"""Reads for deposits: the per-client guard, the assets live deposits take, and what live
deposits hold in the wallet (for the invariant check)."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Min, Q, QuerySet, Sum

from merchants.models import Merchant
from trading.models import IN_FLIGHT, Status, Trade, TradeEvent, TradeItem

# An active deposit (counted by the guard) is one not yet accepted (contract section 3).
GUARDED_STATUSES = (Status.INITIATED, Status.PENDING, Status.ACTIVE)
MAX_ACTIVE_DEPOSITS = 5
MAX_RECENT_DEPOSITS = 10
RECENT_WINDOW = timedelta(minutes=5)


# A deposit takes its assets from creation until it ends, its hold included: a held asset is
# not the owner's to give again. Each unit of a stack is taken on its own.
FOREVER = datetime.max.replace(tzinfo=UTC)  # the end of a hold that has not ended


@dataclass(frozen=True)
class GuardCount:
    active: int
    recent: int
    # When the oldest deposit of the rolling window was created (service time).
    oldest_recent: datetime | None


def client_deposits(*, merchant: Merchant, platform_id: str) -> QuerySet[Trade]:
    return Trade.objects.filter(
        merchant=merchant,
        client_platform_id=platform_id,
        type=Trade.Type.DEPOSIT,
        source=Trade.Source.CLIENT,
    )


def deposit_guard_count(*, merchant: Merchant, platform_id: str, since: datetime) -> GuardCount:
    """The client's active deposits, and those created after ``since`` (a service time), in one
    statement."""
    rows = client_deposits(merchant=merchant, platform_id=platform_id)
    recent = Q(created_at__gt=since)
    counts = rows.filter(Q(status__in=GUARDED_STATUSES) | recent).aggregate(
        active=Count("id", filter=Q(status__in=GUARDED_STATUSES)),
        recent=Count("id", filter=recent),
        oldest_recent=Min("created_at", filter=recent),
    )
    return GuardCount(**counts)


def _held(rows: QuerySet[Trade], field: str) -> dict[str | None, Decimal]:
    totals: dict[str | None, Decimal] = defaultdict(Decimal)
    for merchant_id, total in rows.values_list("merchant_id").annotate(total=Sum(field)):
        totals[str(merchant_id)] += total
    return dict(totals)


def _in_hold(**filters: object) -> QuerySet[Trade]:
    return Trade.objects.filter(type=Trade.Type.DEPOSIT, status=Status.HOLD, **filters)


def deposit_escrow_held() -> dict[str | None, Decimal]:
    """Each merchant's escrow: its standard client deposits in their hold."""
    return _held(_in_hold(source=Trade.Source.CLIENT, is_instant=False), "total_price")


def deposit_collateral_held() -> dict[str | None, Decimal]:
    """Each merchant's collateral: its part of its instant deposits in their hold."""
    return _held(_in_hold(source=Trade.Source.CLIENT, is_instant=True), "collateral_merchant")


def deposit_provider_advances() -> dict[str | None, Decimal]:
    """The provider has advanced the value of every instant deposit still in its hold."""
    total: Decimal = _in_hold(source=Trade.Source.CLIENT, is_instant=True).aggregate(
        total=Sum("total_price", default=Decimal("0.00"))
    )["total"]
    return {None: -total} if total else {}


def _live_asset_items() -> QuerySet[TradeItem]:
    return TradeItem.objects.filter(status__in=IN_FLIGHT).exclude(asset_owner="")


def deposit_free_units(*, platform_id: str, held: dict[str, int]) -> dict[str, int]:
    """For each asset of the owner (item id -> units held), the lowest unit no live deposit of
    any merchant takes; assets with every unit taken are left out: they are busy."""
    taken: dict[str, set[int]] = defaultdict(set)
    rows = _live_asset_items().filter(asset_owner=platform_id, public_id__in=list(held))
    for item_id, unit in rows.values_list("public_id", "asset_unit"):
        taken[item_id].add(unit)
    free = {}
    for item_id, units in held.items():
        first = next((unit for unit in range(units) if unit not in taken[item_id]), None)
        if first is not None:
            free[item_id] = first
    return free


def _asset(owner: str, item_id: str, unit: int) -> str:
    return f"{owner}/{item_id}" + (f" unit {unit}" if unit else "")


def deposit_assets_shared() -> list[str]:
    """Live deposits must each take assets of their own: a unit in two of them (which the
    database refuses) or a live deposit item naming no asset is reported."""
    shared = (
        _live_asset_items()
        .order_by()
        .values_list("asset_owner", "public_id", "asset_unit")
        .annotate(live=Count("id"))
        .filter(live__gt=1)
    )
    problems = [
        f"{_asset(owner, item_id, unit)} is in {live} live deposits"
        for owner, item_id, unit, live in shared
    ]
    unnamed = TradeItem.objects.filter(
        trade__type=Trade.Type.DEPOSIT, status__in=IN_FLIGHT, asset_owner=""
    ).values_list("trade_id", "public_id")
    problems += [f"deposit {trade_id}: {item_id} names no asset" for trade_id, item_id in unnamed]
    return problems


def deposit_credits_doubled() -> list[str]:
    """Every credited deposit (accepted: credited now, or in escrow until its hold ends) has an
    asset behind it that no other deposit was credited for at the same time: the holds of two
    deposits of one unit never overlap, and a credited item always names its asset."""
    credited = TradeItem.objects.filter(trade__type=Trade.Type.DEPOSIT, hold_end_date__isnull=False)
    unnamed = credited.filter(asset_owner="").values_list("trade_id", "public_id")
    problems = [
        f"deposit {trade_id}: {item_id} was credited without an asset"
        for trade_id, item_id in unnamed
    ]
    repeated = (
        credited.exclude(asset_owner="")
        .order_by()
        .values_list("asset_owner", "public_id", "asset_unit")
        .annotate(times=Count("id"))
        .filter(times__gt=1)
    )
    for owner, item_id, unit, _ in repeated:
        problems += _overlapping_holds(owner, item_id, unit)
    return problems


def _overlapping_holds(owner: str, item_id: str, unit: int) -> list[str]:
    """Deposits of one unit whose holds (acceptance until they left the hold) overlapped."""
    items = TradeItem.objects.filter(
        asset_owner=owner, public_id=item_id, asset_unit=unit, hold_end_date__isnull=False
    ).values_list("pk", "trade_id")
    trade_of = dict(items)
    spans: dict[int, list[datetime | None]] = {pk: [None, None] for pk in trade_of}
    moves = TradeEvent.objects.filter(item_id__in=list(trade_of)).filter(
        Q(to_status=Status.HOLD) | Q(from_status=Status.HOLD)
    )
    for pk, to_status, at in moves.values_list("item_id", "to_status", "created_at"):
        spans[pk][0 if to_status == Status.HOLD else 1] = at
    holds = sorted(
        (start, end or FOREVER, trade_of[pk])
        for pk, (start, end) in spans.items()
        if start is not None
    )
    problems = []
    last_end, last_trade = None, None
    for start, end, trade_id in holds:
        if last_end is not None and start < last_end:
            problems.append(
                f"{_asset(owner, item_id, unit)} was credited to deposits {last_trade} and"
                f" {trade_id} at once"
            )
        if last_end is None or end > last_end:
            last_end, last_trade = end, trade_id
    return problems
