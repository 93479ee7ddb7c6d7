"""Realistic item names for the sandbox world, generated deterministically from an index.

``catalog_entry(game, index)`` is prefix-stable: seeding N items gives the first N entries, so
generated inventories (which draw from the first few hundred) always match seeded catalogs.
"""

from dataclasses import dataclass
from decimal import Decimal
from random import Random

from trading.games import CS_GAME, RUST_GAME

# Exterior, wear float range, and how its price compares with a Field-Tested one.
EXTERIORS = (
    ("Factory New", Decimal("0.00"), Decimal("0.07"), Decimal("1.60")),
    ("Minimal Wear", Decimal("0.07"), Decimal("0.15"), Decimal("1.20")),
    ("Field-Tested", Decimal("0.15"), Decimal("0.38"), Decimal("1.00")),
    ("Well-Worn", Decimal("0.38"), Decimal("0.45"), Decimal("0.85")),
    ("Battle-Scarred", Decimal("0.45"), Decimal("1.00"), Decimal("0.75")),
)
RARITIES = (
    ("Consumer Grade", "b0c3d9"),
    ("Industrial Grade", "5e98d9"),
    ("Mil-Spec Grade", "4b69ff"),
    ("Restricted", "8847ff"),
    ("Classified", "d32ce6"),
    ("Covert", "eb4b4b"),
)
WEAPONS = (
    ("AK-47", "Rifle"),
    ("M4A4", "Rifle"),
    ("M4A1-S", "Rifle"),
    ("AWP", "Sniper Rifle"),
    ("SSG 08", "Sniper Rifle"),
    ("Desert Eagle", "Pistol"),
    ("Glock-18", "Pistol"),
    ("USP-S", "Pistol"),
    ("P250", "Pistol"),
    ("Five-SeveN", "Pistol"),
    ("Tec-9", "Pistol"),
    ("CZ75-Auto", "Pistol"),
    ("Dual Berettas", "Pistol"),
    ("R8 Revolver", "Pistol"),
    ("MAC-10", "SMG"),
    ("MP9", "SMG"),
    ("MP7", "SMG"),
    ("UMP-45", "SMG"),
    ("P90", "SMG"),
    ("PP-Bizon", "SMG"),
    ("Galil AR", "Rifle"),
    ("FAMAS", "Rifle"),
    ("SG 553", "Rifle"),
    ("AUG", "Rifle"),
    ("Nova", "Shotgun"),
    ("XM1014", "Shotgun"),
    ("MAG-7", "Shotgun"),
    ("Sawed-Off", "Shotgun"),
    ("Negev", "Machinegun"),
    ("M249", "Machinegun"),
)
FINISHES = (
    "Redline",
    "Asiimov",
    "Hyper Beast",
    "Vulcan",
    "Fire Serpent",
    "Neon Rider",
    "Bloodsport",
    "The Empress",
    "Fuel Injector",
    "Case Hardened",
    "Slate",
    "Phantom Disruptor",
    "Wasteland Rebel",
    "Frontside Misty",
    "Elite Build",
    "Point Disarray",
    "Neon Revolution",
    "Ice Coaled",
    "Nightwish",
    "Head Shot",
    "Printstream",
    "Player Two",
    "Cyber Security",
    "Desolate Space",
    "Howl",
    "Dragon King",
    "Buzz Kill",
    "Royal Paladin",
    "Evil Daimyo",
    "Griffin",
    "Hellfire",
    "Chantico's Fire",
    "Decimator",
    "Golden Coil",
    "Nightmare",
    "Mecha Industries",
    "Hot Rod",
    "Atomic Alloy",
    "Dragon Lore",
    "Medusa",
    "Lightning Strike",
    "Containment Breach",
    "Wildfire",
    "Fever Dream",
    "Graphite",
    "Boom",
    "Man-o'-war",
    "Electric Hive",
    "Pink DDPAT",
    "Safari Mesh",
    "Sand Dune",
    "Boreal Forest",
    "Forest DDPAT",
    "Urban Masked",
    "Night Ops",
    "Candy Apple",
    "Blue Steel",
    "Bright Water",
    "Dark Water",
    "Corticera",
    "Cobalt Halftone",
    "Blaze",
    "Code Red",
    "Kumicho Dragon",
    "Oxide Blaze",
    "Conspiracy",
    "Crimson Web",
    "Hand Cannon",
    "Sunset Storm",
    "Naga",
    "Cortex",
    "Kill Confirmed",
    "Orion",
    "Overgrowth",
    "Road Rash",
    "Serum",
    "Torque",
    "Stainless",
    "Water Elemental",
    "Wraiths",
    "Bullet Queen",
    "Moonrise",
    "Vogue",
    "Snek-9",
    "Clear Polymer",
    "Neo-Noir",
    "Fade",
    "Dragon Tattoo",
    "Weasel",
    "Gamma Doppler",
    "Grinder",
    "Brass",
    "Twilight Galaxy",
    "Sand Dashed",
    "Death Rattle",
    "Trigger Discipline",
    "Eco",
    "Rat Rod",
    "Aloha",
    "Jungle Slipstream",
)
KNIVES = (
    "Karambit",
    "Butterfly Knife",
    "M9 Bayonet",
    "Bayonet",
    "Flip Knife",
    "Gut Knife",
    "Huntsman Knife",
    "Falchion Knife",
    "Bowie Knife",
    "Shadow Daggers",
    "Talon Knife",
    "Stiletto Knife",
    "Ursus Knife",
    "Navaja Knife",
    "Skeleton Knife",
    "Nomad Knife",
    "Paracord Knife",
    "Survival Knife",
    "Classic Knife",
    "Kukri Knife",
)
KNIFE_FINISHES = (
    "Fade",
    "Slaughter",
    "Crimson Web",
    "Case Hardened",
    "Marble Fade",
    "Tiger Tooth",
    "Damascus Steel",
    "Ultraviolet",
    "Night",
    "Blue Steel",
    "Stained",
    "Vanilla",
    "Lore",
    "Autotronic",
    "Freehand",
    "Bright Water",
    "Black Laminate",
    "Rust Coat",
    "Scorched",
    "Urban Masked",
)
# Phased finishes and their phases, with the paint index each phase has on the platform.
PHASED_FINISHES = {
    "Doppler": (
        ("Phase 1", 418),
        ("Phase 2", 419),
        ("Phase 3", 420),
        ("Phase 4", 421),
        ("Ruby", 415),
        ("Sapphire", 416),
        ("Black Pearl", 417),
    ),
    "Gamma Doppler": (
        ("Phase 1", 569),
        ("Phase 2", 570),
        ("Phase 3", 571),
        ("Phase 4", 572),
        ("Emerald", 568),
    ),
}
STICKER_TEAMS = (
    "Natus Vincere",
    "Team Vitality",
    "FaZe Clan",
    "G2 Esports",
    "Team Spirit",
    "MOUZ",
    "Astralis",
    "Ninjas in Pyjamas",
    "Fnatic",
    "Cloud9",
    "Team Liquid",
    "Heroic",
    "ENCE",
    "Complexity",
    "Virtus.pro",
    "BIG",
    "FURIA",
    "Eternal Fire",
    "The MongolZ",
    "paiN Gaming",
)
STICKER_EVENTS = (
    "Katowice 2014",
    "Cologne 2016",
    "Boston 2018",
    "London 2018",
    "Katowice 2019",
    "Berlin 2019",
    "Stockholm 2021",
    "Antwerp 2022",
    "Rio 2022",
    "Paris 2023",
    "Copenhagen 2024",
    "Shanghai 2024",
)
STICKER_FINISHES = ("", " (Holo)", " (Foil)", " (Gold)", " (Glitter)")
CHARMS = (
    "Lil' Squirt",
    "Lil' Cap Gun",
    "Hot Howl",
    "Baby Karat CT",
    "Die-cast AK",
    "Pinch O' Salt",
    "Titeenium AWP",
    "Hang Loose",
    "Lil' Whiskers",
    "Chicken Lil'",
    "Semi-Precious",
    "Lil' Monster",
)
RUST_ADJECTIVES = (
    "Tempered",
    "Glory",
    "Alien Red",
    "Whiteout",
    "No Mercy",
    "Big Grin",
    "Punishment",
    "Blackout",
    "Neon",
    "Victoria",
    "Warhead",
    "Azul",
    "Cobra",
    "Tundra",
    "Apocalyptic",
    "Desert Raider",
    "Forest Raiders",
    "Rainbow Pony",
    "Nightmare",
    "Hellraiser",
    "Chained",
    "Rust Bros",
    "Dragon",
    "Frost Wolf",
    "Polar",
    "Crimson",
    "Jungle",
    "Midnight",
    "Carbon",
    "Sunset",
    "Outlaw",
    "Bandit",
    "Phantom",
    "Rebel",
    "Viking",
    "Samurai",
    "Toxic",
    "Caution",
    "Military",
    "Urban",
    "Ghost",
    "Emerald",
    "Ruby",
    "Amethyst",
    "Golden",
    "Silver",
    "Bronze",
    "Ivory",
    "Obsidian",
    "Jade",
)
RUST_THEMES = (
    "",
    "Camo ",
    "Striped ",
    "Rusted ",
    "Painted ",
    "Burnt ",
    "Tactical ",
    "Royal ",
    "Punk ",
    "Retro ",
    "Arctic ",
    "Desert ",
    "Wasteland ",
    "Neon ",
    "Graffiti ",
    "Tribal ",
    "Pirate ",
    "Cyber ",
    "Vintage ",
    "Elite ",
)
RUST_ITEMS = (
    ("AK47", "Weapon"),
    ("Bolt Action Rifle", "Weapon"),
    ("LR-300", "Weapon"),
    ("MP5A4", "Weapon"),
    ("Thompson", "Weapon"),
    ("Python Revolver", "Weapon"),
    ("Semi-Automatic Rifle", "Weapon"),
    ("Pump Shotgun", "Weapon"),
    ("Custom SMG", "Weapon"),
    ("Crossbow", "Weapon"),
    ("Hunting Bow", "Weapon"),
    ("Rock", "Tool"),
    ("Hatchet", "Tool"),
    ("Pickaxe", "Tool"),
    ("Salvaged Icepick", "Tool"),
    ("Hoodie", "Clothing"),
    ("Pants", "Clothing"),
    ("Boonie Hat", "Clothing"),
    ("Bandana", "Clothing"),
    ("Facemask", "Armor"),
    ("Metal Facemask", "Armor"),
    ("Metal Chest Plate", "Armor"),
    ("Roadsign Jacket", "Armor"),
    ("Coffee Can Helmet", "Armor"),
    ("Riot Helmet", "Armor"),
    ("Boots", "Clothing"),
    ("Tarp", "Resource"),
    ("Sleeping Bag", "Deployable"),
    ("Large Wood Box", "Deployable"),
    ("Wooden Door", "Deployable"),
    ("Sheet Metal Door", "Deployable"),
    ("Garage Door", "Deployable"),
    ("Furnace", "Deployable"),
    ("Rug", "Deployable"),
    ("Locker", "Deployable"),
    ("Armored Door", "Deployable"),
    ("Vending Machine", "Deployable"),
    ("Acoustic Guitar", "Misc"),
    ("Longsword", "Weapon"),
    ("Salvaged Cleaver", "Weapon"),
)
# Rust item kinds that stack in inventories (amount above 1).
RUST_STACKABLE = frozenset({"Resource", "Deployable"})
RUST_RARITIES = (
    ("Common", "c5c5c5"),
    ("Uncommon", "6b8e23"),
    ("Rare", "4169e1"),
    ("Epic", "8a2be2"),
    ("Legendary", "ffa500"),
)

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
