"""The key each trade offer of our bots carries, naming what it moves: a deposit's items (all of
them) or a withdrawal delivery's (by position); the platform reports changes by it."""

from dataclasses import dataclass

DEPOSIT_KEY = "deposit-"
DELIVERY_KEY = "delivery-"


@dataclass(frozen=True)
class OfferOwner:
    trade_id: str
    positions: frozenset[int]  # a delivery's items; empty for a deposit (all of them)


def deposit_offer_key(trade_id: str) -> str:
    return f"{DEPOSIT_KEY}{trade_id}"


def delivery_offer_key(trade_id: str, positions: list[int]) -> str:
    return f"{DELIVERY_KEY}{trade_id}-{'.'.join(str(p) for p in sorted(positions))}"


def offer_owner(key: str) -> OfferOwner | None:
    """The trade (and a delivery's items) a key was made for; None for a key not ours."""
    if key.startswith(DEPOSIT_KEY):
        return OfferOwner(key.removeprefix(DEPOSIT_KEY), frozenset())
    if key.startswith(DELIVERY_KEY):
        rest = key.removeprefix(DELIVERY_KEY)
        trade_id, _, positions = rest.rpartition("-")
        if trade_id and positions and all(p.isdigit() for p in positions.split(".")):
            return OfferOwner(trade_id, frozenset(int(p) for p in positions.split(".")))
    return None
