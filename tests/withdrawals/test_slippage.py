"""slippageBps (decisions section 11) at the service: the edges of the tolerance, a price that
went down, and what is locked. The HTTP routes are in test_create_errors.py."""

from decimal import Decimal

import pytest

from core.errors import DomainError
from tests.factories import trade_url
from tests.withdrawals.conftest import make_listing, money
from trading.models import Trade, TradeItem
from trading.withdrawals.services.create import (
    Recipient,
    WithdrawalOrder,
    WithdrawItem,
    price_accepted,
    withdrawal_create,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("submitted", "current", "bps", "accepted"),
    [
        ("10.00", "10.00", None, True),
        ("10.00", "10.01", None, False),
        ("10.00", "9.99", None, False),  # without a tolerance, lower is a change too
        ("10.00", "10.50", 500, True),  # exactly at the tolerance
        ("10.00", "10.50", 499, False),  # one basis point short of it
        ("10.00", "10.51", 500, False),
        ("10.00", "9.00", 0, True),  # gone down: bought at the lower price
        ("10.00", "10.00", 0, True),
        ("10.00", "10.01", 0, False),
        ("0.01", "0.02", 1000, False),  # 100 % up is beyond the largest tolerance (10 %)
        ("99999.99", "100000.00", 1, True),
    ],
)
def test_the_tolerance_is_exact(submitted, current, bps, accepted):
    assert (
        price_accepted(submitted=Decimal(submitted), current=Decimal(current), slippage_bps=bps)
        is accepted
    )


def _buy(actor, listing, price: str, bps: int | None) -> Trade:
    return withdrawal_create(
        merchant=actor.merchant,
        source=Trade.Source.SELF,
        recipient=Recipient(trade_url=trade_url(42)),
        order=WithdrawalOrder(
            items=[WithdrawItem(item_id=listing.id, price=Decimal(price))],
            game=730,
            slippage_bps=bps,
        ),
    )


def test_exactly_at_the_tolerance_the_current_price_is_bought_and_locked(
    alice_funded, catalog_item
):
    listing = make_listing(catalog_item, "10.00")  # alice's price: 10.50

    trade = _buy(alice_funded, listing, "10.00", 500)

    (row,) = TradeItem.objects.filter(trade=trade)
    assert row.price == Decimal("10.50")
    assert row.locked == Decimal("10.50")
    assert trade.total_price == Decimal("10.50")
    assert money(alice_funded)["locked"] == Decimal("10.50")


def test_one_basis_point_over_is_the_price_changed(alice_funded, catalog_item):
    listing = make_listing(catalog_item, "10.00")

    with pytest.raises(DomainError) as refused:
        _buy(alice_funded, listing, "10.00", 499)

    assert refused.value.key == "PRICE_CHANGED"
    assert refused.value.details == {"itemId": listing.id, "price": Decimal("10.50")}
    assert not Trade.objects.exists()
    assert money(alice_funded)["locked"] == Decimal("0.00")


def test_a_price_that_went_down_is_bought_at_the_lower_price(alice_funded, catalog_item):
    listing = make_listing(catalog_item, "10.00")

    trade = _buy(alice_funded, listing, "11.00", 0)

    assert trade.total_price == Decimal("10.50")
    assert money(alice_funded)["locked"] == Decimal("10.50")


def test_without_a_tolerance_a_lower_price_is_still_a_change(alice_funded, catalog_item):
    listing = make_listing(catalog_item, "10.00")

    with pytest.raises(DomainError) as refused:
        _buy(alice_funded, listing, "11.00", None)

    assert refused.value.key == "PRICE_CHANGED"


def test_one_item_beyond_the_tolerance_refuses_the_whole_withdrawal(alice_funded, catalog_item):
    within, beyond = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")

    with pytest.raises(DomainError) as refused:
        withdrawal_create(
            merchant=alice_funded.merchant,
            source=Trade.Source.SELF,
            recipient=Recipient(trade_url=trade_url(42)),
            order=WithdrawalOrder(
                items=[
                    WithdrawItem(item_id=within.id, price=Decimal("10.45")),  # 10.50 is within
                    WithdrawItem(item_id=beyond.id, price=Decimal("20.00")),  # 21.00 is not
                ],
                game=730,
                slippage_bps=100,
            ),
        )

    assert refused.value.details == {"itemId": beyond.id, "price": Decimal("21.00")}
    assert not Trade.objects.exists()
