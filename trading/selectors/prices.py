"""The price book (contract 2.4): built once per game, marketplace price version and merchant
fee/margin, cached as ready JSON until a price changes."""

import time
from collections import defaultdict
from decimal import Decimal
from typing import Any

import orjson
from django.core.cache import cache

from config.api.rendering import dumps
from merchants.models import Merchant
from trading.marketplace import get_marketplace
from trading.marketplace.base import Delivery, PriceFloors
from trading.models import CatalogItem, CatalogPhase
from trading.pricing import deposit_price, fee_inclusive
from trading.sandbox.names import CS_GAME, PHASES

PRICE_BOOK_TTL = 24 * 3600
# How long one build may take before others stop waiting for it and build themselves.
BUILD_SECONDS = 15


def price_book_get(*, merchant: Merchant, game: int) -> orjson.Fragment:
    version = get_marketplace().price_version()
    key = f"prices:{game}:{version}:{merchant.withdraw_fee_rate}:{merchant.deposit_margin_rate}"
    book = cache.get(key) or _built_by_another(key)
    if book is None:
        book = dumps(
            _build(game, fee=merchant.withdraw_fee_rate, margin=merchant.deposit_margin_rate)
        )
        cache.set(key, book, timeout=PRICE_BOOK_TTL)
        cache.delete(f"{key}:building")
    return orjson.Fragment(book)


def _built_by_another(key: str) -> bytes | None:
    """When another request is already building this book, wait for it (a few seconds at
    most) instead of building the same thing again; None means: build it yourself."""
    if cache.add(f"{key}:building", 1, timeout=BUILD_SECONDS):
        return None
    deadline = time.monotonic() + BUILD_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.05)
        book = cache.get(key)
        if book is not None:
            return bytes(book)
    return None


def _floor(floors: PriceFloors, item_id: str, phases: list[str], delivery: str) -> Decimal | None:
    prices = [floors[(item_id, p, delivery)] for p in phases if (item_id, p, delivery) in floors]
    return min(prices) if prices else None


def _gross(price: Decimal | None, fee: Decimal) -> Decimal | None:
    return fee_inclusive(price, fee) if price is not None else None


def _build(game: int, *, fee: Decimal, margin: Decimal) -> list[dict[str, Any]]:
    market = get_marketplace()
    floors = market.price_floors(game)
    items = list(
        CatalogItem.objects.filter(game=game)
        .order_by("market_hash_name")
        .only("id", "market_hash_name", "reference_price", "is_phased", "stock_limit")
    )
    stock = market.own_stock([item.id for item in items])
    phase_prices: dict[str, dict[str, Decimal]] = defaultdict(dict)
    for item_id, phase, reference in CatalogPhase.objects.filter(item__game=game).values_list(
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
        entry: dict[str, Any] = {
            "itemId": item.id if standard is not None or instant is not None else None,
            "marketHashName": item.market_hash_name,
        }
        phases = phase_prices.get(item.id, {}) if item.is_phased else {}
        if phases:
            # The floor: the cheapest phase the service accepts.
            deposit = min((d for d in map(pay, phases.values()) if d > 0), default=Decimal("0.00"))
        else:
            deposit = pay(item.reference_price)
        entry["accepted"] = deposit > 0
        entry["deposit"] = deposit
        if game == CS_GAME:
            entry["withdraw"] = {"standard": _gross(standard, fee), "instant": _gross(instant, fee)}
        else:
            cheapest = min((p for p in (standard, instant) if p is not None), default=None)
            entry["withdraw"] = _gross(cheapest, fee)
        if phases:
            entry["phases"] = [
                {
                    "phase": phase,
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
