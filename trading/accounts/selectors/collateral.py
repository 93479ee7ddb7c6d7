"""A client's instant-deposit collateral: its limit under the merchant's risk policy, less what
the provider already backs for the same person (every account sharing its kycHash)."""

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connection

from core.db import ModelRows
from merchants.models import Client, Merchant
from trading.models import Status, Trade
from trading.risk import RiskPolicy, client_collateral_limit

# Instant deposits hold collateral from creation until they end (not only in their hold), so two
# deposits created together cannot both use the same collateral.
EXPOSED_STATUSES = (Status.INITIATED, Status.PENDING, Status.ACTIVE, Status.HOLD)

_TRADES = ModelRows(Trade, only=["collateral_provider", "client", "is_instant", "status"])
_CLIENTS = ModelRows(Client, only=["id", "merchant", "kyc_hash"])
_EXPOSURE_COLUMN, _EXPOSURE_CLIENT, _INSTANT, _STATUS = _TRADES.quoted(
    ["collateral_provider", "client", "is_instant", "status"]
)
_CLIENT_ID, _CLIENT_MERCHANT, _KYC_HASH = _CLIENTS.quoted(["id", "merchant", "kyc_hash"])
_EXPOSED = [status.value for status in EXPOSED_STATUSES]
# The inventory reads this every request, with its other facts in one statement
# (``trading.accounts.selectors.inventory``): it is written out by hand, not compiled by the ORM.
_EXPOSURE = (
    f"SELECT COALESCE(SUM(t.{_EXPOSURE_COLUMN}), 0.00) FROM {_TRADES.table('t')}"  # noqa: S608
    f" WHERE t.{_INSTANT} AND t.{_STATUS} IN ({', '.join(['%s'] * len(EXPOSED_STATUSES))})"
)
_OF_CLIENT = f" AND t.{_EXPOSURE_CLIENT} = %s"
_OF_IDENTITY = (
    f" AND t.{_EXPOSURE_CLIENT} IN (SELECT g.{_CLIENT_ID} FROM {_CLIENTS.table('g')}"  # noqa: S608
    f" WHERE g.{_CLIENT_MERCHANT} = %s AND g.{_KYC_HASH} = %s)"
)


def client_collateral_exposure_query(*, client: Client) -> tuple[str, list[Any]]:
    """The statement summing what the provider backs for this person's instant deposits in
    flight (``exposure_converted`` reads its value): the platform accounts of one person within
    a merchant are those sharing its kycHash."""
    params: list[Any] = [*_EXPOSED]
    if not client.kyc_hash:
        return _EXPOSURE + _OF_CLIENT, [*params, _TRADES.param("client", client.pk)]
    return _EXPOSURE + _OF_IDENTITY, [
        *params,
        _CLIENTS.param("merchant", client.merchant_id),
        _CLIENTS.param("kyc_hash", client.kyc_hash),
    ]


_EXPOSURE_VALUE = ModelRows(Trade, only=["collateral_provider"])


def exposure_converted(value: Any) -> Decimal:
    """The statement's sum as the ORM gives it (SQLite sums decimals as floats)."""
    (exposure,) = _EXPOSURE_VALUE.converted((value,))
    return Decimal(exposure)


def client_collateral_exposure(*, client: Client) -> Decimal:
    """What the provider already backs for this person's instant deposits."""
    sql, params = client_collateral_exposure_query(client=client)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        (value,) = cursor.fetchone()
    return exposure_converted(value)


def client_collateral_left(
    *, client: Client, merchant: Merchant, now: datetime, exposure: Decimal
) -> Decimal:
    """The client's limit minus ``exposure``, what its identity's instant deposits use (never
    below 0): the identity's exposures add up against one limit."""
    limit = client_collateral_limit(
        client=client, policy=RiskPolicy.for_merchant(merchant.risk_policy), now=now
    )
    return max(Decimal("0.00"), limit - exposure)


def client_collateral_available(*, client: Client, merchant: Merchant, now: datetime) -> Decimal:
    """The client's collateral left now, its exposure read here."""
    return client_collateral_left(
        client=client,
        merchant=merchant,
        now=now,
        exposure=client_collateral_exposure(client=client),
    )
