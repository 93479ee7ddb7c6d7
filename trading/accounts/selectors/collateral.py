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
_ID, _MERCHANT, _KYC_HASH = _CLIENTS.quoted(["id", "merchant", "kyc_hash"])
_EXPOSED = [status.value for status in EXPOSED_STATUSES]


def client_exposure_sql(alias: str) -> tuple[str, list[Any]]:
    """An expression summing what the provider backs for the instant deposits in flight of the
    person behind the client row ``alias`` of the enclosing statement: the platform accounts of
    one person within a merchant are those sharing its kycHash (an empty one is the account's
    own). Written out by hand: the client inventory reads it every request with its other facts
    in one statement (``trading.accounts.selectors.inventory``). The account's own trades and
    its identity's other accounts' are two sums, each read by index (as one ``IN`` of both,
    PostgreSQL hashed every trade in flight). Its value goes through ``exposure_converted``."""
    statuses = ", ".join(["%s"] * len(_EXPOSED))
    in_flight = (
        f"SELECT COALESCE(SUM(t.{_EXPOSURE_COLUMN}), 0.00) FROM {_TRADES.table('t')}"  # noqa: S608
        f" WHERE t.{_INSTANT} AND t.{_STATUS} IN ({statuses})"
    )
    own = f"({in_flight} AND t.{_EXPOSURE_CLIENT} = {alias}.{_ID})"
    others = (
        f"({in_flight} AND t.{_EXPOSURE_CLIENT} IN (SELECT g.{_ID} FROM {_CLIENTS.table('g')}"  # noqa: S608
        f" WHERE g.{_MERCHANT} = {alias}.{_MERCHANT} AND g.{_KYC_HASH} = {alias}.{_KYC_HASH}"
        f" AND g.{_KYC_HASH} <> '' AND g.{_ID} <> {alias}.{_ID}))"
    )
    return f"({own} + {others})", [*_EXPOSED, *_EXPOSED]


_EXPOSURE_OF_CLIENT, _EXPOSURE_PARAMS = client_exposure_sql("c")
_CLIENT_EXPOSURE = f"SELECT {_EXPOSURE_OF_CLIENT} FROM {_CLIENTS.table('c')} WHERE c.{_ID} = %s"  # noqa: S608
_EXPOSURE_VALUE = ModelRows(Trade, only=["collateral_provider"])


def exposure_converted(value: Any) -> Decimal:
    """The summed column as the ORM gives it (SQLite sums decimals as floats)."""
    (exposure,) = _EXPOSURE_VALUE.converted((value,))
    return Decimal(exposure)


def client_collateral_exposure(*, client: Client) -> Decimal:
    """What the provider already backs for this person's instant deposits."""
    with connection.cursor() as cursor:
        cursor.execute(_CLIENT_EXPOSURE, [*_EXPOSURE_PARAMS, _CLIENTS.param("id", client.pk)])
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
