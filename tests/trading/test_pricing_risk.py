"""Units: the fee arithmetic of trading.pricing and the collateral model of trading.risk."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from merchants.models import Client
from trading.pricing import (
    CENT,
    deposit_price,
    fee_inclusive,
    sourcing_ceiling,
    sourcing_floor,
)
from trading.risk import RiskPolicy, client_collateral_limit

D = Decimal
FEES = [D(f) for f in ("0", "0.0001", "0.01", "0.03", "0.05", "0.0750", "0.1", "0.125", "0.2")]
FEES += [D("0.3333"), D("0.5"), D("0.9999")]


class TestFeeInclusive:
    @pytest.mark.parametrize(
        ("price", "fee", "expected"),
        [
            ("9.52", "0.05", "10.00"),  # 9.996
            ("11.01", "0.05", "11.57"),  # 11.5605: up, not to nearest
            ("10.00", "0.05", "10.50"),  # exact stays
            ("0.01", "0.05", "0.02"),  # 0.0105
            ("0.01", "0.0001", "0.02"),
            ("0.00", "0.05", "0.00"),
            ("12.34", "0", "12.34"),
            ("100000.00", "0.9999", "199990.00"),
            ("9.51", "0.10", "10.47"),  # 10.461
        ],
    )
    def test_rounds_up_to_the_cent(self, price, fee, expected):
        result = fee_inclusive(D(price), D(fee))
        assert result == D(expected)
        assert result.as_tuple().exponent == -2


class TestDepositPrice:
    @pytest.mark.parametrize(
        ("reference", "margin", "expected"),
        [
            ("10.01", "0.10", "9.00"),  # 9.009: down
            ("10.09", "0.10", "9.08"),  # 9.081
            ("9.99", "0.10", "8.99"),  # 8.991
            ("0.12", "0.10", "0.10"),  # 0.108 -> exactly the floor
            ("0.11", "0.10", "0.00"),  # 0.099 -> 0.09, below the floor
            ("0.10", "0", "0.10"),
            ("0.0999", "0", "0.00"),
            ("0.12", "0.20", "0.00"),  # 0.096
            ("3000.00", "0.20", "2400.00"),
            ("0.00", "0.10", "0.00"),
        ],
    )
    def test_rounds_down_with_the_floor(self, reference, margin, expected):
        result = deposit_price(D(reference), D(margin))
        assert result == D(expected)
        assert result.as_tuple().exponent == -2


def _cents(n: int) -> Decimal:
    return (D(n) * CENT).quantize(CENT)


class TestSourcingBounds:
    @pytest.mark.parametrize(
        ("gross", "fee", "ceiling", "floor"),
        [
            ("10.00", "0.05", "9.52", "9.52"),  # 9.52 -> 10.00 exactly
            ("9.99", "0.05", "9.51", "9.51"),
            ("10.01", "0.05", "9.53", "9.53"),
            ("10.48", "0.10", "9.52", "9.52"),
            ("10.47", "0.10", "9.51", "9.51"),
            ("10.50", "0.05", "10.00", "10.00"),  # an exact multiple
            ("0.02", "0.05", "0.01", "0.01"),
            ("0.01", "0.05", "0.00", "0.01"),  # no cent sells at 0.01 with a fee
            ("0.00", "0.05", "0.00", "0.00"),
            ("100.00", "0", "100.00", "100.00"),
        ],
    )
    def test_known_values(self, gross, fee, ceiling, floor):
        assert sourcing_ceiling(D(gross), D(fee)) == D(ceiling)
        assert sourcing_floor(D(gross), D(fee)) == D(floor)

    @pytest.mark.parametrize("fee", FEES)
    def test_exact_at_every_boundary_of_a_range(self, fee):
        for n in list(range(0, 400)) + list(range(999_900, 1_000_100)):
            gross = _cents(n)
            self._check(gross, fee)

    @settings(max_examples=400, derandomize=True, deadline=None)
    @given(cents=st.integers(0, 10_000_000), basis=st.integers(0, 9999))
    def test_exact_for_any_price_and_fee(self, cents, basis):
        self._check(_cents(cents), D(basis) / 10000)

    @staticmethod
    def _check(gross: Decimal, fee: Decimal) -> None:
        ceiling = sourcing_ceiling(gross, fee)
        assert fee_inclusive(ceiling, fee) <= gross
        assert fee_inclusive(ceiling + CENT, fee) > gross
        floor = sourcing_floor(gross, fee)
        assert fee_inclusive(floor, fee) >= gross
        assert floor == 0 or fee_inclusive(floor - CENT, fee) < gross


def client(**fields) -> Client:
    defaults = {
        "kyc_level": 0,
        "total_wager": D("0"),
        "fiat_deposits": False,
        "crypto_deposits": False,
        "registration_date": None,
    }
    return Client(**{**defaults, **fields})


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
POLICY = RiskPolicy()


def limit(**fields) -> Decimal:
    return client_collateral_limit(client=client(**fields), policy=POLICY, now=NOW)


class TestCollateralLimit:
    def test_base_without_data(self):
        assert limit() == D("10.00")

    def test_five_percent_of_the_wager(self):
        assert limit(kyc_level=2, total_wager=D("100")) == D("15.00")
        assert limit(total_wager=D("0.30")) == D("10.01")  # 10.015, rounded down

    @pytest.mark.parametrize(("kyc", "cap"), [(0, "50"), (1, "200"), (2, "1000"), (3, "5000")])
    def test_cap_by_kyc_level(self, kyc, cap):
        assert limit(kyc_level=kyc, total_wager=D("10000000")) == D(cap)
        assert limit(kyc_level=kyc, total_wager=D("100")) == min(D(cap), D("15.00"))

    def test_kyc_3_with_fiat_and_crypto_doubles(self):
        assert limit(
            kyc_level=3, fiat_deposits=True, crypto_deposits=True, total_wager=D("1000")
        ) == D("120.00")
        # The multiplier applies after the cap.
        assert limit(
            kyc_level=3, fiat_deposits=True, crypto_deposits=True, total_wager=D("1000000")
        ) == D("10000.00")

    @pytest.mark.parametrize("kind", [{"fiat_deposits": True}, {"crypto_deposits": True}])
    def test_one_deposit_kind_is_125(self, kind):
        assert limit(kyc_level=3, total_wager=D("1000"), **kind) == D("75.00")
        assert limit(kyc_level=3, total_wager=D("1"), **kind) == D("12.56")  # 12.5625

    def test_both_kinds_below_kyc_3_is_125(self):
        assert limit(
            kyc_level=2, fiat_deposits=True, crypto_deposits=True, total_wager=D("1000")
        ) == D("75.00")

    @pytest.mark.parametrize(
        ("age", "expected"),
        [
            (timedelta(days=366), "132.00"),
            (timedelta(days=365, seconds=1), "132.00"),
            (timedelta(days=365), "126.00"),  # not over a year
            (timedelta(days=91), "126.00"),
            (timedelta(days=90, seconds=1), "126.00"),
            (timedelta(days=90), "120.00"),
            (timedelta(days=1), "120.00"),
            (timedelta(days=-30), "120.00"),  # in the future: no boost
        ],
    )
    def test_account_age(self, age, expected):
        assert limit(
            kyc_level=3,
            fiat_deposits=True,
            crypto_deposits=True,
            total_wager=D("1000"),
            registration_date=NOW - age,
        ) == D(expected)

    def test_merchant_overrides(self):
        policy = RiskPolicy.for_merchant(
            {"cap_kyc0": 20, "base": "15", "wager_rate": "0.1", "unknown_rule": 99}
        )
        assert policy.cap_kyc0 == D(20)
        assert policy.cap_kyc3 == D(5000)  # untouched
        assert client_collateral_limit(
            client=client(total_wager=D("30")), policy=policy, now=NOW
        ) == D("18.00")
        assert client_collateral_limit(
            client=client(total_wager=D("100")), policy=policy, now=NOW
        ) == D("20.00")

    def test_overridden_multipliers(self):
        policy = RiskPolicy.for_merchant(
            {"both_deposits_kyc3_multiplier": 3, "account_year_multiplier": "1.5"}
        )
        full = client(
            kyc_level=3,
            fiat_deposits=True,
            crypto_deposits=True,
            total_wager=D("1000"),
            registration_date=NOW - timedelta(days=400),
        )
        assert client_collateral_limit(client=full, policy=policy, now=NOW) == D("270.00")

    def test_result_is_in_cents(self):
        result = limit(
            kyc_level=1,
            fiat_deposits=True,
            total_wager=D("0.33"),
            registration_date=NOW - timedelta(days=100),
        )
        assert result.as_tuple().exponent == -2
        assert result == D("13.14")  # 10.0165 x 1.25 x 1.05 = 13.1466...
