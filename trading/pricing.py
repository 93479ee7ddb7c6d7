"""Fee arithmetic (decisions sections 1 and 2): fee-inclusive prices round up to the cent,
deposit prices and backed-out sourcing ceilings round down."""

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

CENT = Decimal("0.01")
MIN_DEPOSIT_PRICE = Decimal("0.10")
ZERO = Decimal("0.00")


def fee_inclusive(price: Decimal, fee_rate: Decimal) -> Decimal:
    return (price * (1 + fee_rate)).quantize(CENT, rounding=ROUND_CEILING)


def deposit_price(reference: Decimal, margin_rate: Decimal) -> Decimal:
    """What the service pays for an item; 0 when below the 0.10 USD floor."""
    price = (reference * (1 - margin_rate)).quantize(CENT, rounding=ROUND_FLOOR)
    return price if price >= MIN_DEPOSIT_PRICE else ZERO


def sourcing_ceiling(gross: Decimal, fee_rate: Decimal) -> Decimal:
    """The highest sourcing price whose fee-inclusive price stays within ``gross``."""
    ceiling = (gross / (1 + fee_rate)).quantize(CENT, rounding=ROUND_FLOOR)
    while fee_inclusive(ceiling + CENT, fee_rate) <= gross:
        ceiling += CENT
    while ceiling > 0 and fee_inclusive(ceiling, fee_rate) > gross:
        ceiling -= CENT
    return ceiling


def sourcing_floor(gross: Decimal, fee_rate: Decimal) -> Decimal:
    """The lowest sourcing price whose fee-inclusive price reaches ``gross``."""
    floor = max(ZERO, (gross / (1 + fee_rate)).quantize(CENT, rounding=ROUND_FLOOR) - CENT)
    while fee_inclusive(floor, fee_rate) < gross:
        floor += CENT
    return floor
