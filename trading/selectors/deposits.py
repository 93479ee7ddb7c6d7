"""Reads for deposits: the per-client guard, the client's instant-deposit collateral and what
live deposits hold in the wallet (for the invariant check)."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Q, QuerySet, Sum

from merchants.models import Client, Merchant
from trading.models import Status, Trade
from trading.risk import RiskPolicy, client_collateral_limit

# An active deposit (counted by the guard) is one not yet accepted (contract section 3).
GUARDED_STATUSES = (Status.INITIATED, Status.PENDING, Status.ACTIVE)
MAX_ACTIVE_DEPOSITS = 5
MAX_RECENT_DEPOSITS = 10
RECENT_WINDOW = timedelta(minutes=5)
# Instant deposits hold collateral from creation until they end (not only in their hold), so two
# deposits created together cannot both use the same collateral.
EXPOSED_STATUSES = (Status.INITIATED, Status.PENDING, Status.ACTIVE, Status.HOLD)


@dataclass(frozen=True)
class GuardCount:
    active: int
    recent: int
    # When the oldest deposit of the rolling window leaves it.
    window_frees_at: datetime | None


def client_deposits(*, merchant: Merchant, platform_id: str) -> QuerySet[Trade]:
    return Trade.objects.filter(
        merchant=merchant,
        client_platform_id=platform_id,
        type=Trade.Type.DEPOSIT,
        source=Trade.Source.CLIENT,
    )


def deposit_guard_count(*, merchant: Merchant, platform_id: str, now: datetime) -> GuardCount:
    rows = client_deposits(merchant=merchant, platform_id=platform_id)
    since = now - RECENT_WINDOW
    counts = rows.filter(Q(status__in=GUARDED_STATUSES) | Q(created_at__gt=since)).aggregate(
        active=Count("id", filter=Q(status__in=GUARDED_STATUSES)),
        recent=Count("id", filter=Q(created_at__gt=since)),
    )
    oldest = rows.filter(created_at__gt=since).order_by("created_at").values_list("created_at")[:1]
    first = oldest[0][0] if counts["recent"] else None
    return GuardCount(
        active=counts["active"],
        recent=counts["recent"],
        window_frees_at=first + RECENT_WINDOW if first is not None else None,
    )


def client_identity_group(*, client: Client) -> QuerySet[Client]:
    """The platform accounts of one person within a merchant: those sharing a kycHash."""
    if not client.kyc_hash:
        return Client.objects.filter(pk=client.pk)
    return Client.objects.filter(merchant_id=client.merchant_id, kyc_hash=client.kyc_hash)


def client_collateral_exposure(*, client: Client) -> Decimal:
    """What the provider already backs for this person's instant deposits."""
    exposure: Decimal = Trade.objects.filter(
        client__in=client_identity_group(client=client),
        is_instant=True,
        status__in=EXPOSED_STATUSES,
    ).aggregate(total=Sum("collateral_provider", default=Decimal("0.00")))["total"]
    return exposure


def client_collateral_available(*, client: Client, merchant: Merchant, now: datetime) -> Decimal:
    """The client's limit minus the exposure of its identity's instant deposits (never below 0).
    The identity's exposures add up against one limit."""
    limit = client_collateral_limit(
        client=client, policy=RiskPolicy.for_merchant(merchant.risk_policy), now=now
    )
    return max(Decimal("0.00"), limit - client_collateral_exposure(client=client))


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
