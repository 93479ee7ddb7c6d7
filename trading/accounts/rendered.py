"""Inventory pages: an owner's items with the merchant's deposit offers, each item rendered once
per snapshot, margin and market version and kept as JSON beside the snapshot.

This read returns the API body, which is why it is not a selector (as the market's pages): the
client inventory was the slowest of the per-request reads (bench/README.md, "The client reads and
the no-op"), most of it building and unpickling the offers and rendering every item on every
request. A page now filters, sorts and cuts rows of (accepted, price, name, JSON) and joins the
items' JSON; only the collateral is computed per request."""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson

from core import clock
from core.json import dumps
from core.market_version import market_version
from merchants.models import Merchant
from trading.accounts.selectors.collateral import client_collateral_left
from trading.accounts.selectors.inventory import (
    DepositQuote,
    InventoryQuery,
    client_deposit_facts_get,
    deposit_facts_check,
    deposit_facts_get,
    deposit_quotes,
    fleet_check,
    inventory_derived,
)
from trading.accounts.shapes import inventory_item_json
from trading.marketplace.base import MarketSort
from trading.platform.base import InventoryAsset
from trading.pricing import ZERO

# An item as a page uses it: whether it has an offer, the offer's price, its lower-case name
# (what search and the name sorts compare), its rendered JSON.
Row = tuple[bool, Decimal, str, bytes]


def _rows(quotes: list[DepositQuote]) -> list[Row]:
    return [
        (
            not quote.refusal,
            quote.price,
            quote.asset.market_hash_name.lower(),
            dumps(
                inventory_item_json(
                    quote.asset,
                    quote.item,
                    offer_price=quote.price,
                    accepted=not quote.refusal,
                    reference=quote.reference,
                )
            ),
        )
        for quote in quotes
    ]


_SORTS: dict[MarketSort, tuple[Callable[[Row], Any], bool]] = {
    MarketSort.RELEVANCE: (lambda r: (r[0], r[1]), True),
    MarketSort.PRICE_ASC: (lambda r: r[1], False),
    MarketSort.PRICE_DESC: (lambda r: r[1], True),
    MarketSort.NAME_ASC: (lambda r: r[2], False),
    MarketSort.NAME_DESC: (lambda r: r[2], True),
}


def inventory_page(
    *, merchant: Merchant, platform_id: str, query: InventoryQuery, client: bool
) -> orjson.Fragment:
    """One page of the owner's inventory with the merchant's offers. ``client``: the owner is the
    calling client, and ``collateral`` is its instant-deposit collateral (0 for any other owner,
    and for a client the service has no row of). The database is asked once (the game's
    switches and, for a client, its row and exposure), the cache once (``inventory_derived``)."""
    facts = (
        client_deposit_facts_get(game=query.game, merchant=merchant, platform_id=platform_id)
        if client
        else deposit_facts_get(game=query.game)
    )
    deposit_facts_check(facts=facts)
    fleet_check(merchant=merchant)

    def derive(assets: list[InventoryAsset]) -> list[Row]:
        return _rows(deposit_quotes(assets=assets, merchant=merchant, game=query.game))

    updated_at, rows = inventory_derived(
        merchant=merchant,
        platform_id=platform_id,
        game=query.game,
        refresh=query.refresh,
        # Offers depend on the snapshot, the merchant's margin and the market (reference prices,
        # own stock): the same three give the same rows.
        basis=f"{merchant.deposit_margin_rate}:{market_version()}",
        derive=derive,
    )
    if query.accepted_only:
        rows = [r for r in rows if r[0]]
    if query.search:
        needle = query.search.lower()
        rows = [r for r in rows if needle in r[2]]
    if query.min_price is not None:
        rows = [r for r in rows if r[1] >= query.min_price]
    if query.max_price is not None:
        rows = [r for r in rows if r[1] <= query.max_price]
    if query.sort is not None:
        key, reverse = _SORTS[query.sort]
        rows = sorted(rows, key=key, reverse=reverse)
    count = len(rows)
    if query.limit != -1:
        start = (query.page - 1) * query.limit
        rows = rows[start : start + query.limit]
    collateral = (
        client_collateral_left(
            client=facts.client, merchant=merchant, now=clock.real_now(), exposure=facts.exposure
        )
        if facts.client is not None
        else ZERO
    )
    return orjson.Fragment(
        dumps(
            {
                "inventory": [orjson.Fragment(r[3]) for r in rows],
                "count": count,
                "updatedAt": updated_at,
                "collateral": collateral,
            }
        )
    )
