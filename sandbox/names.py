"""Realistic item names for the sandbox world, generated deterministically from an index.

``catalog_entry(game, index)`` is prefix-stable: seeding N items gives the first N entries, so
generated inventories (which draw from the first few hundred) always match seeded catalogs.
The word lists they are made of are data, in ``names.json`` beside this module.
"""

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from random import Random
from typing import Any

from trading.games import CS_GAME, RUST_GAME

# The word lists (names.json) are read once, at import. Lists of rows become tuples, as the
# generators below index and unpack them.
_DATA = json.loads(Path(__file__).with_name("names.json").read_text("utf-8"), parse_float=Decimal)


def _rows(key: str) -> tuple[Any, ...]:
    return tuple(tuple(row) if isinstance(row, list) else row for row in _DATA[key])


# Exterior, wear float range, and how its price compares with a Field-Tested one.
EXTERIORS: tuple[tuple[str, Decimal, Decimal, Decimal], ...] = _rows("exteriors")
RARITIES: tuple[tuple[str, str], ...] = _rows("rarities")  # name, colour
WEAPONS: tuple[tuple[str, str], ...] = _rows("weapons")  # weapon, item type
FINISHES: tuple[str, ...] = _rows("finishes")
KNIVES: tuple[str, ...] = _rows("knives")
KNIFE_FINISHES: tuple[str, ...] = _rows("knife_finishes")
# Phased finishes and their phases, with the paint index each phase has on the platform.
PHASED_FINISHES: dict[str, tuple[tuple[str, int], ...]] = {
    finish: tuple(tuple(phase) for phase in phases)
    for finish, phases in _DATA["phased_finishes"].items()
}
STICKER_TEAMS: tuple[str, ...] = _rows("sticker_teams")
STICKER_EVENTS: tuple[str, ...] = _rows("sticker_events")
STICKER_FINISHES: tuple[str, ...] = _rows("sticker_finishes")
CHARMS: tuple[str, ...] = _rows("charms")
RUST_ADJECTIVES: tuple[str, ...] = _rows("rust_adjectives")
RUST_THEMES: tuple[str, ...] = _rows("rust_themes")
RUST_ITEMS: tuple[tuple[str, str], ...] = _rows("rust_items")  # item, kind
# Rust item kinds that stack in inventories (amount above 1).
RUST_STACKABLE = frozenset(_DATA["rust_stackable"])
RUST_RARITIES: tuple[tuple[str, str], ...] = _rows("rust_rarities")

ICON_BASE = "https://cdn.sandbox.invalid/icons"


@dataclass(frozen=True)
class CatalogEntry:
    game: int
    index: int
    market_hash_name: str
    name: str
    item_type: str
    rarity: str
    rarity_color: str
    exterior: str
    reference_price: Decimal
    phased_finish: str  # "Doppler" or "Gamma Doppler" for phased items, else ""
    stackable: bool

    @property
    def id(self) -> str:
        return catalog_id(self.game, self.index)

    @property
    def icon_url(self) -> str:
        return f"{ICON_BASE}/{self.game}/{self.index:06d}.png"

    @property
    def phases(self) -> tuple[tuple[str, int], ...]:
        return PHASED_FINISHES.get(self.phased_finish, ())


def catalog_id(game: int, index: int) -> str:
    return f"{game}-{index:06d}"


def _price(rng: Random, low: int, high: int) -> Decimal:
    """A log-uniform price between ``low`` and ``high`` cents."""
    cents = int(low * (high / low) ** rng.random())
    return Decimal(cents) / 100


def catalog_entry(game: int, index: int) -> CatalogEntry:
    if game == CS_GAME:
        return _cs_entry(index)
    return _rust_entry(index, Random(f"catalog:{game}:{index}"))  # noqa: S311 (sandbox data)


def _cs_entry(index: int) -> CatalogEntry:
    exterior, _, _, price_factor = EXTERIORS[index % len(EXTERIORS)]
    group = index // len(EXTERIORS)
    # One skin in all its exteriors shares a rarity and a base price.
    rng = Random(f"catalog:{CS_GAME}:{group}")  # noqa: S311 (sandbox data, not security)
    stattrak = "StatTrak™ " if group % 4 == 3 else ""
    kind = group % 9
    if kind == 8:  # one group in nine is a knife
        knife = KNIVES[(group // 9) % len(KNIVES)]
        finishes = (*PHASED_FINISHES, *KNIFE_FINISHES)
        finish = finishes[(group // (9 * len(KNIVES))) % len(finishes)]
        name = f"★ {stattrak}{knife} | {finish}"
        rarity, color = "Covert", "eb4b4b"
        price = _price(rng, 8_000, 250_000)
        item_type = "Knife"
        phased = finish if finish in PHASED_FINISHES else ""
        # Past every combination the names repeat; a souvenir-style tag keeps them unique.
        cycle = group // (9 * len(KNIVES) * len(finishes))
    else:
        weapon, item_type = WEAPONS[group % len(WEAPONS)]
        finish = FINISHES[(group // len(WEAPONS)) % len(FINISHES)]
        name = f"{stattrak}{weapon} | {finish}"
        rarity, color = RARITIES[(group * 7) % len(RARITIES)]
        price = _price(rng, 3, 40_000)
        phased = ""
        cycle = group // (len(WEAPONS) * len(FINISHES))
    if cycle:
        name = f"{name} #{cycle + 1}"
    return CatalogEntry(
        game=CS_GAME,
        index=index,
        market_hash_name=f"{name} ({exterior})",
        name=name,
        item_type=item_type,
        rarity=rarity,
        rarity_color=color,
        exterior=exterior,
        reference_price=max(Decimal("0.03"), (price * price_factor).quantize(Decimal("0.01"))),
        phased_finish=phased,
        stackable=False,
    )


def _rust_entry(index: int, rng: Random) -> CatalogEntry:
    item, item_type = RUST_ITEMS[index % len(RUST_ITEMS)]
    group = index // len(RUST_ITEMS)
    adjective = RUST_ADJECTIVES[group % len(RUST_ADJECTIVES)]
    theme = RUST_THEMES[(group // len(RUST_ADJECTIVES)) % len(RUST_THEMES)]
    cycle = group // (len(RUST_ADJECTIVES) * len(RUST_THEMES))
    name = f"{theme}{adjective} {item}" + (f" #{cycle + 1}" if cycle else "")
    rarity, color = RUST_RARITIES[(index * 3 + group) % len(RUST_RARITIES)]
    return CatalogEntry(
        game=RUST_GAME,
        index=index,
        market_hash_name=name,
        name=name,
        item_type=item_type,
        rarity=rarity,
        rarity_color=color,
        exterior="",
        reference_price=_price(rng, 3, 90_000),
        phased_finish="",
        stackable=item_type in RUST_STACKABLE,
    )


def _icon(name: str) -> str:
    return f"{ICON_BASE}/extras/{abs(hash_name(name)):x}.png"


def hash_name(name: str) -> int:
    """A stable (not per-process salted) number for a name."""
    value = 0
    for char in name:
        value = (value * 131 + ord(char)) % 2**61
    return value


def sticker(rng: Random, slot: int) -> dict[str, object]:
    team = rng.choice(STICKER_TEAMS)
    name = f"Sticker | {team}{rng.choice(STICKER_FINISHES)} | {rng.choice(STICKER_EVENTS)}"
    return {
        "name": name,
        "marketHashName": name,
        "slot": slot,
        "wear": round(rng.random(), 2),
        "iconUrl": _icon(name),
    }


def charm(rng: Random) -> dict[str, str]:
    name = f"Charm | {rng.choice(CHARMS)}"
    return {"name": name, "marketHashName": name, "iconUrl": _icon(name)}


def stickers(rng: Random) -> list[dict[str, object]]:
    """Most items carry none; some up to four, each in its own slot."""
    if rng.random() >= 0.3:
        return []
    return [sticker(rng, slot) for slot in sorted(rng.sample(range(5), rng.randint(1, 4)))]
