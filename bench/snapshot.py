"""Issue 27's "search and item reads stay as fast as now": the market reads over the suppliers'
snapshot (``SupplierListing``) against the same reads over the sandbox's listings, both holding
the same million listings.

    .venv/bin/python bench/snapshot.py [--rounds 5]

Seeds the sandbox market as bench/market.py does (50,000 items, 1,000,000 listings) if it has
fewer, copies those listings into the snapshot under a bench supplier, then runs every search
of bench/market.py with every sort, and the item reads of the most listed items, alternately on
the two tables, both vacuumed first. Each read runs in-process through ``ListingTable`` (what
the market selectors call on a cache miss), with the cached counts warm, so the figure is the
page query itself.
Prints the median milliseconds per table and their ratio (snapshot / sandbox).
"""

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from harness import ensure_database, setup_django
from market import SEARCHES, SORTS, seed_if_needed

BENCH_SUPPLIER = "bench"
ITEM_READS = 50


def snapshot_fill() -> str:
    """The sandbox's listings copied into the snapshot, once."""
    from django.db import connection

    from trading.models import Supplier, SupplierListing

    Supplier.objects.get_or_create(name=BENCH_SUPPLIER, defaults={"enabled": False})
    have = SupplierListing.objects.filter(supplier_id=BENCH_SUPPLIER).count()
    if have >= 990_000:
        return f"snapshot already filled ({have:,} listings)"
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM trading_supplierlisting WHERE supplier_id = %s", [BENCH_SUPPLIER]
        )
        cursor.execute(
            "INSERT INTO trading_supplierlisting (id, supplier_id, supplier_ref, asset_ref,"
            " item_id, game, market_hash_name, popularity, price, supplier_price, delivery,"
            " phase, paint_index, wear, paint_seed, bot_platform_id, seen_at)"
            " SELECT 'bench-' || id, %s, id, '', item_id, game, market_hash_name, popularity,"
            " price, price, delivery, phase, paint_index, wear, paint_seed, '', now()"
            " FROM sandbox_sandboxlisting",
            [BENCH_SUPPLIER],
        )
    return f"snapshot filled in {time.perf_counter() - started:.1f} s"


def tables_settle() -> None:
    """Both tables vacuumed and analysed, as autovacuum leaves them: a freshly filled table's
    index-only scans would otherwise visit the heap (its visibility map is empty)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("sandbox_sandboxlisting", "trading_supplierlisting"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def timed(read: Callable[[], object], rounds: int) -> float:
    """Median milliseconds of ``rounds`` runs after one warm-up."""
    read()
    runs = []
    for _ in range(rounds):
        started = time.perf_counter()
        read()
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    ensure_database()
    setup_django()
    print(seed_if_needed(), flush=True)
    print(snapshot_fill(), flush=True)
    tables_settle()

    from sandbox.marketplace import LISTINGS as SANDBOX
    from trading.games import CS_GAME
    from trading.marketplace.base import ItemListingsQuery, MarketQuery, MarketSort
    from trading.marketplace.suppliers.marketplace import LISTINGS as SNAPSHOT
    from trading.models import CatalogItem

    tables = {"sandbox": SANDBOX, "snapshot": SNAPSHOT}
    figures: dict[str, dict[str, list[float]]] = {"search": {}, "item": {}}
    for search in ["", *SEARCHES]:
        for sort in SORTS:
            query = MarketQuery(
                game=CS_GAME,
                search=search,
                sort=MarketSort(sort),
                min_price=None,
                max_price=None,
                offset=0,
                limit=50,
            )
            for name, table in tables.items():
                ms = timed(partial(table.search, query), rounds)
                figures["search"].setdefault(name, []).append(ms)
    popular = CatalogItem.objects.filter(game=CS_GAME).order_by("-popularity")[:ITEM_READS]
    for item in popular:
        item_query = ItemListingsQuery(
            catalog_id=item.id, phase="", float_min=None, float_max=None, offset=0, limit=50
        )
        for name, table in tables.items():
            ms = timed(partial(table.item_listings, item_query), rounds)
            figures["item"].setdefault(name, []).append(ms)

    print(f"\nmedian ms per read, {rounds} rounds each after a warm-up")
    print("| read | reads | sandbox | snapshot | snapshot / sandbox |")
    print("|---|---:|---:|---:|---:|")
    for read, by_table in figures.items():
        sandbox = statistics.median(by_table["sandbox"])
        snapshot = statistics.median(by_table["snapshot"])
        count = len(by_table["sandbox"])
        print(f"| {read} | {count} | {sandbox:.2f} | {snapshot:.2f} | {snapshot / sandbox:.2f} |")


if __name__ == "__main__":
    main()
