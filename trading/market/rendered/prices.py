"""The price book (contract 2.4), cached as ready JSON per game and merchant fee/margin.

The book of the first game is about 6 MB of JSON for 50,000 items, and every purchase moves the
marketplace's price version, so rebuilding it on each version would rebuild it all the time
under trading. A book is therefore served while it matches the current price version or is at
most ``MAX_AGE`` old on the service clock; one request rebuilds it after that while the others
keep serving the previous one. Prices in the book are quotes: buys and withdrawals are priced
against the live listing (``PRICE_CHANGED``), so a book ``MAX_AGE`` behind misleads no one.

Building reads the catalog in slices of ``SLICE_ITEMS`` items, each rendered to bytes before the
next is read, so a build holds one slice of rows in memory rather than the whole catalog. Each
web process keeps the bodies of the last few books it served (they never change: a rebuild is a
new book), so a request costs two small Redis reads instead of a 6 MB fetch."""

import time
import uuid
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from threading import Lock
from typing import cast

from django.core.cache import cache

from core import clock
from core.json import dumps
from core.market_version import market_version
from merchants.models import Merchant
from trading.games import CS_GAME, PHASES
from trading.market.shapes import PriceEntryOut, WithdrawPricesOut
from trading.marketplace import get_marketplace
from trading.marketplace.base import Delivery, PriceFloors
from trading.models import CatalogItem, CatalogPhase
from trading.pricing import deposit_price, fee_inclusive
from trading.trades.shapes import Phase

MAX_AGE = timedelta(seconds=30)
BOOK_TTL = 24 * 3600
# How long a build may take before others stop waiting for it and build themselves.
BUILD_SECONDS = 60
SLICE_ITEMS = 2000
# Bodies kept per web process: one per game and fee/margin pair in use, a few MB each.
LOCAL_BODIES = 4

_local_bodies: OrderedDict[str, bytes] = OrderedDict()
_local_lock = Lock()


@dataclass(frozen=True)
class BookRef:
    """Which body is the current book of a game and fee/margin pair, and what it was built on."""

    body_key: str
    version: str
    built_at: datetime

    def serves(self, *, version: str, now: datetime) -> bool:
        return self.version == version or now - self.built_at < MAX_AGE


def price_book_get(*, merchant: Merchant, game: int) -> bytes:
    """The book as one JSON array, shared by every request that serves it: never modify it."""
    version = market_version()
    fee, margin = merchant.withdraw_fee_rate, merchant.deposit_margin_rate
    ref_key = f"prices:{game}:{fee}:{margin}"
    cached = cache.get(ref_key)
    ref = cached if isinstance(cached, BookRef) else None
    if ref is None or not ref.serves(version=version, now=clock.now()):
        ref = _rebuilt(ref_key, stale=ref)
    body = _body(ref) if ref is not None else None
    if body is None:
        body = _build(ref_key, game=game, fee=fee, margin=margin, version=version)
    return body


def _rebuilt(ref_key: str, *, stale: BookRef | None) -> BookRef | None:
    """None when this request is the one to build. While another builds, the stale book is
    served if there is one; with none yet, wait for the build (a few seconds)."""
    if cache.add(f"{ref_key}:building", 1, timeout=BUILD_SECONDS):
        return None
    if stale is not None:
        return stale
    deadline = time.monotonic() + BUILD_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.05)
        ref = cache.get(ref_key)
        if isinstance(ref, BookRef):
            return ref
    return None


def _build(ref_key: str, *, game: int, fee: Decimal, margin: Decimal, version: str) -> bytes:
    ref = BookRef(body_key=f"prices-body:{uuid.uuid4().hex}", version=version, built_at=clock.now())
    body = _render(game, fee=fee, margin=margin)
    cache.set(ref.body_key, body, timeout=BOOK_TTL)
    cache.set(ref_key, ref, timeout=BOOK_TTL)
    cache.delete(f"{ref_key}:building")
    _local_put(ref.body_key, body)
    return body


def _body(ref: BookRef) -> bytes | None:
    """The book's JSON; None when Redis evicted it from under its reference."""
    with _local_lock:
        body = _local_bodies.get(ref.body_key)
        if body is not None:
            _local_bodies.move_to_end(ref.body_key)
            return body
    body = cache.get(ref.body_key)
    if body is None:
        return None
    _local_put(ref.body_key, bytes(body))
    return bytes(body)


def _local_put(body_key: str, body: bytes) -> None:
    with _local_lock:
        _local_bodies[body_key] = body
        while len(_local_bodies) > LOCAL_BODIES:
            _local_bodies.popitem(last=False)


def _floor(floors: PriceFloors, item_id: str, phases: list[str], delivery: str) -> Decimal | None:
    prices = [floors[(item_id, p, delivery)] for p in phases if (item_id, p, delivery) in floors]
    return min(prices) if prices else None


def _gross(price: Decimal | None, fee: Decimal) -> Decimal | None:
    return fee_inclusive(price, fee) if price is not None else None


def _render(game: int, *, fee: Decimal, margin: Decimal) -> bytes:
    """The whole book as one JSON array, in catalog name order."""
    parts: list[bytes] = []
    after = ""
    while True:
        # Names are unique per game: the (game, name) constraint's index walks the slices.
        items = list(
            CatalogItem.objects.filter(game=game, market_hash_name__gt=after)
            .order_by("market_hash_name")
            .only("id", "market_hash_name", "reference_price", "is_phased", "stock_limit")[
                :SLICE_ITEMS
            ]
        )
        if not items:
            break
        # Each slice as a JSON array without its brackets, to be joined with commas.
        parts.append(dumps(_entries(game, items, fee=fee, margin=margin))[1:-1])
        after = items[-1].market_hash_name
    return b"[" + b",".join(parts) + b"]"


def _entries(
    game: int, items: list[CatalogItem], *, fee: Decimal, margin: Decimal
) -> list[PriceEntryOut]:
    market = get_marketplace()
    ids = [item.id for item in items]
    floors = market.price_floors(ids)
    stock = market.own_stock(ids)
    phase_prices: dict[str, dict[str, Decimal]] = defaultdict(dict)
    for item_id, phase, reference in CatalogPhase.objects.filter(item_id__in=ids).values_list(
        "item_id", "phase", "reference_price"
    ):
        phase_prices[item_id][phase] = reference
    book = []
    for item in items:
        full = stock.get(item.id, 0) >= item.stock_limit

        def pay(reference: Decimal, full: bool = full) -> Decimal:
            return Decimal("0.00") if full else deposit_price(reference, margin)

        all_phases = ["", *PHASES]
        standard = _floor(floors, item.id, all_phases, Delivery.STANDARD)
        instant = _floor(floors, item.id, all_phases, Delivery.INSTANT)
        phases = phase_prices.get(item.id, {}) if item.is_phased else {}
        if phases:
            # The floor: the cheapest phase the service accepts.
            deposit = min((d for d in map(pay, phases.values()) if d > 0), default=Decimal("0.00"))
        else:
            deposit = pay(item.reference_price)
        withdraw: WithdrawPricesOut | Decimal | None
        if game == CS_GAME:
            withdraw = {"standard": _gross(standard, fee), "instant": _gross(instant, fee)}
        else:
            cheapest = min((p for p in (standard, instant) if p is not None), default=None)
            withdraw = _gross(cheapest, fee)
        entry: PriceEntryOut = {
            "itemId": item.id if standard is not None or instant is not None else None,
            "marketHashName": item.market_hash_name,
            "accepted": deposit > 0,
            "deposit": deposit,
            "withdraw": withdraw,
        }
        if phases:
            entry["phases"] = [
                {
                    "phase": cast(Phase, phase),
                    "accepted": pay(reference) > 0,
                    "deposit": pay(reference),
                    "withdraw": {
                        "standard": _gross(
                            _floor(floors, item.id, [phase], Delivery.STANDARD), fee
                        ),
                        "instant": _gross(_floor(floors, item.id, [phase], Delivery.INSTANT), fee),
                    },
                }
                for phase, reference in sorted(phases.items(), key=lambda p: PHASES.index(p[0]))
            ]
        book.append(entry)
    return book
