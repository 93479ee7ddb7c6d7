"""The client collateral model (decisions section 4): how much instant-deposit value the
provider backs for one client. Every number can be overridden per merchant."""

from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from merchants.models import Client

CENT = Decimal("0.01")


@dataclass(frozen=True)
class RiskPolicy:
    cap_kyc0: Decimal = Decimal(50)
    cap_kyc1: Decimal = Decimal(200)
    cap_kyc2: Decimal = Decimal(1000)
    cap_kyc3: Decimal = Decimal(5000)
    base: Decimal = Decimal(10)
    wager_rate: Decimal = Decimal("0.05")
    both_deposits_kyc3_multiplier: Decimal = Decimal("2.0")
    one_deposit_multiplier: Decimal = Decimal("1.25")
    account_year_multiplier: Decimal = Decimal("1.1")
    account_90_days_multiplier: Decimal = Decimal("1.05")

    @classmethod
    def for_merchant(cls, overrides: dict[str, Any]) -> "RiskPolicy":
        known = {f.name for f in fields(cls)}
        return replace(cls(), **{k: Decimal(str(v)) for k, v in overrides.items() if k in known})

    def cap(self, kyc_level: int) -> Decimal:
        caps = (self.cap_kyc0, self.cap_kyc1, self.cap_kyc2, self.cap_kyc3)
        return caps[min(max(kyc_level, 0), 3)]


def client_collateral_limit(*, client: Client, policy: RiskPolicy, now: datetime) -> Decimal:
    limit = min(
        policy.cap(client.effective_kyc_level), policy.base + policy.wager_rate * client.total_wager
    )
    if client.effective_kyc_level == 3 and client.fiat_deposits and client.crypto_deposits:
        limit *= policy.both_deposits_kyc3_multiplier
    elif client.fiat_deposits or client.crypto_deposits:
        limit *= policy.one_deposit_multiplier
    if client.registration_date is not None:
        age = now - client.registration_date
        if age > timedelta(days=365):
            limit *= policy.account_year_multiplier
        elif age > timedelta(days=90):
            limit *= policy.account_90_days_multiplier
    return limit.quantize(CENT, rounding=ROUND_FLOOR)
