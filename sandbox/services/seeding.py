"""Fill the sandbox world: catalog and phases, bots, marketplace listings. Fast enough for a
million listings (PostgreSQL takes them through COPY)."""

import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from random import Random

import orjson
from django.db import connection, transaction

from core.market_version import market_version_bump
from sandbox.models import SandboxBot, SandboxListing
from sandbox.names import EXTERIORS, CatalogEntry, catalog_entry, charm, stickers
from trading.games import CS_GAME, GAMES, RUST_GAME
from trading.market.services import market_resync
from trading.models import CatalogItem, CatalogPhase

CENT = Decimal("0.01")
CS_SHARE = 0.7  # of items and of listings
INSTANT_SHARE = 0.15
BOT_NAMES = ("Atlas", "Borealis", "Cosmo", "Draco", "Echo", "Fjord", "Gamma", "Helios")
# How a phase's reference price compares with the item's.
PHASE_FACTORS = {
    "Phase 1": Decimal("0.95"),
    "Phase 2": Decimal("1.15"),
    "Phase 3": Decimal("0.90"),
    "Phase 4": Decimal("1.05"),
    "Ruby": Decimal("4.50"),
    "Sapphire": Decimal("5.00"),
    "Black Pearl": Decimal("3.00"),
    "Emerald": Decimal("6.00"),
}
LISTING_COLUMNS = (
    "id",
    "item_id",
    "game",
    "market_hash_name",
    "popularity",
    "price",
    "delivery",
    "phase",
    "paint_index",
    "wear",
    "paint_seed",
    "stickers",
    "charm",
    "prop_id",
    "preview_token",
    "bot_id",
    "amount",
)


@dataclass(frozen=True)
class SeedReport:
    items: int
    listings: int
    bots: int


def _split(total: int) -> dict[int, int]:
    first = round(total * CS_SHARE)
    return {CS_GAME: first, RUST_GAME: total - first}


def phase_reference(entry_price: Decimal, phase: str) -> Decimal:
    return (entry_price * PHASE_FACTORS[phase]).quantize(CENT)


def _seed_catalog(per_game: dict[int, int]) -> dict[int, list[CatalogEntry]]:
    entries = {game: [catalog_entry(game, i) for i in range(n)] for game, n in per_game.items()}
    items = [
        CatalogItem(
            id=e.id,
            game=e.game,
            market_hash_name=e.market_hash_name,
            name=e.name,
            item_type=e.item_type,
            rarity=e.rarity,
            rarity_color=e.rarity_color,
            exterior=e.exterior,
            icon_url=e.icon_url,
            reference_price=e.reference_price,
            is_phased=bool(e.phases),
            stackable=e.stackable,
        )
        for game_entries in entries.values()
        for e in game_entries
    ]
    CatalogItem.objects.bulk_create(items, batch_size=5000, ignore_conflicts=True)
    phases = [
        CatalogPhase(
            item_id=e.id,
            phase=phase,
            paint_index=paint_index,
            reference_price=phase_reference(e.reference_price, phase),
        )
        for game_entries in entries.values()
        for e in game_entries
        for phase, paint_index in e.phases
    ]
    CatalogPhase.objects.bulk_create(phases, batch_size=5000, ignore_conflicts=True)
    return entries


def _seed_bots() -> list[int]:
    for n, name in enumerate(BOT_NAMES):
        SandboxBot.objects.get_or_create(
            platform_id=str(76561199000000000 + n),
            defaults={"name": f"Bot {name}", "avatar": f"https://cdn.sandbox.invalid/bots/{n}.png"},
        )
    return list(SandboxBot.objects.order_by("id").values_list("id", flat=True))


def _listing_rows(
    rng: Random, game: int, entries: list[CatalogEntry], count: int, bot_ids: list[int]
) -> Iterator[tuple[object, ...]]:
    # A few items are listed a lot, most a little: the first entries are the popular ones.
    picks = [int(len(entries) * rng.random() ** 3) for _ in range(count)]
    popularity = Counter(picks)
    exteriors = {name: (float(low), float(high)) for name, low, high, _ in EXTERIORS}
    for seq, index in enumerate(picks):
        entry = entries[index]
        phase, paint_index = rng.choice(entry.phases) if entry.phases else ("", None)
        reference = (
            phase_reference(entry.reference_price, phase) if phase else entry.reference_price
        )
        price = max(CENT, (reference * Decimal(0.85 + rng.random() * 0.45)).quantize(CENT))
        instant = rng.random() < INSTANT_SHARE
        if game == CS_GAME:
            listing_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            low, high = exteriors[entry.exterior]
            wear: object = f"{low + (high - low) * rng.random():.10f}"
            paint_seed: object = rng.randint(0, 1000)
            sticker_list = stickers(rng)
            charm_json = orjson.dumps(charm(rng)).decode() if rng.random() < 0.05 else None
            prop_id = str(rng.randint(10**9, 10**10)) if rng.random() < 0.4 else ""
            preview = f"{rng.getrandbits(32):08x}" if instant or rng.random() < 0.3 else ""
        else:
            listing_id = f"{entry.id}-{seq:08d}"
            wear = paint_seed = charm_json = None
            sticker_list, prop_id, preview = [], "", ""
        amount = rng.randint(2, 50) if entry.stackable and rng.random() < 0.5 else 1
        yield (
            listing_id,
            entry.id,
            game,
            entry.market_hash_name,
            popularity[index],
            price,
            "instant" if instant else "standard",
            phase,
            paint_index,
            wear,
            paint_seed,
            orjson.dumps(sticker_list).decode(),
            charm_json,
            prop_id,
            preview,
            rng.choice(bot_ids) if instant else None,
            amount,
        )


def _write_listings(rows: Iterator[tuple[object, ...]]) -> None:
    if connection.vendor != "postgresql":
        _bulk_create_listings(rows)
        return
    columns = ", ".join(LISTING_COLUMNS)
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f"COPY sandbox_sandboxlisting ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def _bulk_create_listings(rows: Iterator[tuple[object, ...]]) -> None:
    batch: list[SandboxListing] = []
    for row in rows:
        fields = dict(zip(LISTING_COLUMNS, row, strict=True))
        fields["stickers"] = orjson.loads(str(fields["stickers"]))
        fields["charm"] = orjson.loads(str(fields["charm"])) if fields["charm"] else None
        batch.append(SandboxListing(**fields))
        if len(batch) == 5000:
            SandboxListing.objects.bulk_create(batch)
            batch = []
    SandboxListing.objects.bulk_create(batch)


@contextmanager
def _bulk_load_mode() -> Iterator[None]:
    """On PostgreSQL, drop the listing table's secondary indexes and foreign keys for the load
    and rebuild them after: one sort per index and one validating join beat a million row-wise
    updates. Runs inside the seeding transaction, so readers never see the table without them."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index"
            " WHERE indrelid = 'sandbox_sandboxlisting'::regclass AND NOT indisprimary"
        )
        indexes = cursor.fetchall()
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'sandbox_sandboxlisting'::regclass AND contype = 'f'"
        )
        foreign_keys = cursor.fetchall()
        for name, _ in foreign_keys:
            cursor.execute(f'ALTER TABLE sandbox_sandboxlisting DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
        for _, definition in indexes:
            cursor.execute(definition)
        for name, definition in foreign_keys:
            cursor.execute(
                f'ALTER TABLE sandbox_sandboxlisting ADD CONSTRAINT "{name}" {definition}'
            )


def _clear_listings() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE sandbox_sandboxlisting")
    else:
        SandboxListing.objects.all().delete()


def _update_popularity() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE trading_catalogitem SET popularity = COALESCE(("
            " SELECT COUNT(*) FROM sandbox_sandboxlisting l"
            " WHERE l.item_id = trading_catalogitem.id), 0)"
        )


def sandbox_seed(*, items: int, listings: int, seed: int = 730) -> SeedReport:
    """Catalog entries are added (never removed); listings are replaced as a whole."""
    rng = Random(seed)  # noqa: S311 (sandbox data, not security)
    with transaction.atomic():
        entries = _seed_catalog(_split(items))
        bot_ids = _seed_bots()
        _clear_listings()
        with _bulk_load_mode():
            for game, count in _split(listings).items():
                if entries[game] and count:
                    _write_listings(_listing_rows(rng, game, entries[game], count, bot_ids))
        _update_popularity()
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        # Fresh rows: set the visibility map (index-only scans) and the planner's statistics.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE sandbox_sandboxlisting")
            cursor.execute("VACUUM ANALYZE trading_catalogitem")
    transaction.on_commit(market_version_bump)
    market_resync(games=GAMES)
    return SeedReport(
        items=CatalogItem.objects.filter(game__in=GAMES).count(),
        listings=SandboxListing.objects.count(),
        bots=len(bot_ids),
    )
