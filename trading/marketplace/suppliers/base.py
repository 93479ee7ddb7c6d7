"""What every supplier marketplace adapter answers, in the domain's terms: its listings of an
item (by name), a buy of one listing at its price under our reference, the status of the trades
bought under our references, and the account's balance. Amounts are USD ``Decimal``; each
adapter converts its own unit exactly.

A call ends in one of four ways: an answer; ``SupplierRefusedError`` (the supplier said no:
nothing was bought); ``SupplierUnavailableError`` (nothing was sent, or the supplier answered
that it did nothing: down, maintenance, 429, a clock refusal); ``SupplierOutcomeUnknownError``
(a buy was sent and its answer lost: it may or may not have happened)."""

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Protocol, runtime_checkable


class SupplierRefusedError(Exception):
    """``reason``: LISTING_UNAVAILABLE (sold, withdrawn), PRICE_CHANGED (``price`` is the new
    one), or SUPPLIER_REFUSED (anything else it refused, e.g. our balance is short)."""

    def __init__(self, reason: str, message: str, price: Decimal | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.price = price


class SupplierUnavailableError(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SupplierOutcomeUnknownError(Exception):
    pass


@dataclass(frozen=True)
class PriceUnit:
    """A supplier's price unit, ``per_usd`` of them to the dollar; converted exactly both ways."""

    name: str
    per_usd: Decimal

    def usd(self, units: int | str) -> Decimal:
        return Decimal(int(units)) / self.per_usd

    def units(self, usd: Decimal) -> int:
        scaled = usd * self.per_usd
        if scaled != scaled.to_integral_value():
            raise ValueError(f"{usd} USD is not a whole number of {self.name}")
        return int(scaled)


@dataclass(frozen=True)
class SupplierOffer:
    """One listing as the supplier shows it. ``ref`` is the id a buy names (Waxpeer item id,
    DMarket offer id); ``asset_ref`` the item itself where the supplier tells it apart."""

    ref: str
    market_hash_name: str
    price: Decimal
    asset_ref: str = ""
    phase: str = ""
    paint_index: int | None = None
    wear: Decimal | None = None
    paint_seed: int | None = None
    # How the supplier sells it, where it tells kinds apart (DMarket: ``dmarket``, an item its
    # own bots hold, withdrawn to us on request; ``p2p``, traded by its seller); "" otherwise.
    offer_type: str = ""


@dataclass(frozen=True)
class ListingChange:
    """One listing as a supplier's socket tells of it: listed or repriced (``offer`` as it is
    now), or ``gone`` (sold, withdrawn)."""

    game: int
    offer: SupplierOffer
    gone: bool = False


class TradeState(StrEnum):
    """Where a bought trade is, in the withdrawal's terms."""

    WAITING = "waiting"  # bought; the seller has not sent the trade offer yet
    SENT = "sent"  # the trade offer is on its way to the recipient
    DELIVERED = "delivered"  # the recipient has the item
    CANCELED = "canceled"  # the supplier cancelled or delivery failed: the supplier refunds us


@dataclass(frozen=True)
class SupplierTrade:
    """A bought trade as the supplier reports it. ``offer_id`` is the platform's id of the
    trade offer the supplier's seller sent to the recipient (Waxpeer's ``trade_id``), "" while
    the supplier reports none. ``held``: the item sits in our account at the supplier and moves
    only when we withdraw it (DMarket's own inventory), ``withdrawable`` once it may, with the
    supplier's class id a withdrawal names (``class_ref``)."""

    reference: str
    state: TradeState
    supplier_order_id: str = ""
    reason: str = ""
    offer_id: str = ""
    held: bool = False
    withdrawable: bool = False
    class_ref: str = ""


@dataclass(frozen=True)
class OrderRef:
    """A purchase to ask about: our reference, and what the supplier may know it by."""

    reference: str
    asset_ref: str = ""
    supplier_order_id: str = ""


@dataclass(frozen=True)
class BuyRequest:
    reference: str  # ours, at most 50 characters: how the trade is found again
    offer_ref: str
    asset_ref: str
    market_hash_name: str
    price: Decimal  # the listed price we accept, USD
    game: int
    trade_url: str
    offer_type: str = ""


@dataclass(frozen=True)
class WithdrawRequest:
    """Move an item held for us at the supplier to the Steam account linked to our supplier
    account. ``request_id`` is ours, written down before the supplier is asked."""

    request_id: str
    asset_ref: str
    class_ref: str
    game: int


class SupplierClient(Protocol):
    name: str
    games: tuple[int, ...]
    # Where bought items go: "" straight to the recipient's trade URL (Waxpeer), else the
    # platform id of our bot linked to the supplier account (DMarket), which hands them on.
    delivers_to: str

    def offers(self, *, game: int, names: list[str]) -> dict[str, list[SupplierOffer]]:
        """The listings of each named item (names the supplier has none of map to [])."""

    @property
    def names_per_call(self) -> int:
        """How many item names one ``offers`` request covers (the poller's batch)."""

    def buy(self, request: BuyRequest) -> str:
        """Buy the listing at exactly its price; returns the supplier's id of the purchase."""

    def trades(self, orders: list[OrderRef], *, game: int) -> dict[str, SupplierTrade]:
        """The trades of these purchases by our reference; one the supplier does not know
        (nothing was bought under it, or not yet visible) is left out."""

    def balance(self) -> Decimal:
        """The account's spendable USD balance."""


@runtime_checkable
class SupplierHolding(Protocol):
    """A supplier that holds bought items for us until we withdraw them (DMarket)."""

    def withdraw(self, request: WithdrawRequest) -> str:
        """Ask for the item to be sent to our linked Steam account; returns the supplier's id
        of the transfer. Refused: ``SupplierRefusedError``; its answer lost:
        ``SupplierOutcomeUnknownError``."""


LISTING_ID_SEPARATOR = "-"


def listing_id_of(supplier: str, offer_ref: str) -> str:
    """Our id of a supplier's listing: ``<supplier>-<its id>`` (``waxpeer-27165625733``,
    ``dmarket-c3d4e5f6-...``): 5-256 characters of ``[a-z0-9-]``, so it is a valid ``itemId`` and
    a path segment, and names the supplier to buy from even after the listing left the
    snapshot."""
    return f"{supplier}{LISTING_ID_SEPARATOR}{offer_ref}"


def listing_id_parts(listing_id: str) -> tuple[str, str]:
    """(supplier, its listing id) of one of our listing ids; ("", "") if it is none."""
    supplier, _, offer_ref = listing_id.partition(LISTING_ID_SEPARATOR)
    return (supplier, offer_ref) if supplier and offer_ref else ("", "")
