"""A client's instant-deposit collateral: its limit under the merchant's risk policy, less what
the provider already backs for the same person (every account sharing its kycHash)."""

from datetime import datetime
from decimal import Decimal

from django.db.models import QuerySet, Sum

from merchants.models import Client, Merchant
from trading.models import Status, Trade
from trading.risk import RiskPolicy, client_collateral_limit

# Instant deposits hold collateral from creation until they end (not only in their hold), so two
# deposits created together cannot both use the same collateral.
EXPOSED_STATUSES = (Status.INITIATED, Status.PENDING, Status.ACTIVE, Status.HOLD)


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
