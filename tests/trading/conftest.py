"""Fixtures of the game-world tests.

Two merchants with different pricing: ``alice`` keeps the defaults (withdraw fee 5 %, deposit
margin 10 %), ``bob`` takes a 10 % fee and a 20 % margin, so every price differs between them.
``world`` is a small catalog and market with known prices in both games.
"""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import pytest

from sandbox.models import SandboxBot, SandboxListing
from tests.factories import Actor
from tests.trading.factories import (
    CS,
    RUST,
    CatalogItemFactory,
    CatalogPhaseFactory,
    SandboxBotFactory,
    SandboxListingFactory,
)
from tests.trading.helpers import Caller, caller, clock_move
from trading.models import CatalogItem


@pytest.fixture
def bob(bob: Actor) -> Actor:
    bob.merchant.withdraw_fee_rate = Decimal("0.1000")
    bob.merchant.deposit_margin_rate = Decimal("0.2000")
    bob.merchant.save()
    return bob


@pytest.fixture
def advance_clock(db: None) -> Callable[[int], None]:
    return clock_move


@pytest.fixture
def bot(db: None) -> SandboxBot:
    """One online bot: inventories need a fleet."""
    return SandboxBotFactory(name="Bot Atlas", platform_id="76561199100099999")


@dataclass
class World:
    # Game 730
    ak: CatalogItem  # two standard listings and one instant one
    awp: CatalogItem  # one standard listing
    karambit: CatalogItem  # phased: Phase 1, Phase 2 and Ruby reference prices
    glock: CatalogItem  # own stock full (stock_limit 1, one instant listing)
    howl: CatalogItem  # no listing at all
    nova: CatalogItem  # deposit exactly 0.10 for alice
    p250: CatalogItem  # deposit below 0.10
    # Game 252490
    tempered: CatalogItem  # standard 18.00 and instant 17.50
    hoodie: CatalogItem  # no listing
    door: CatalogItem  # stackable, instant listing only
    ak_instant: SandboxListing
    bot: SandboxBot


@pytest.fixture
def world(db: None, bot: SandboxBot) -> World:
    ak = CatalogItemFactory(
        id="730-000100",
        market_hash_name="AK-47 | Redline (Field-Tested)",
        name="AK-47 | Redline",
        reference_price=Decimal("10.01"),
        popularity=30,
    )
    SandboxListingFactory(item=ak, price=Decimal("9.52"), wear=Decimal("0.2"), paint_seed=7)
    ak_instant = SandboxListingFactory(
        item=ak,
        instant=True,
        bot=bot,
        price=Decimal("11.01"),
        wear=Decimal("0.2512345678"),
        paint_seed=321,
        prop_id="4455667788",
        stickers=[
            {
                "name": "Sticker | Natus Vincere | Katowice 2014",
                "marketHashName": "Sticker | Natus Vincere | Katowice 2014",
                "slot": 0,
                "wear": 0.12,
                "iconUrl": "https://cdn.sandbox.invalid/icons/extras/navi.png",
            }
        ],
        charm={
            "name": "Charm | Lil' Squirt",
            "marketHashName": "Charm | Lil' Squirt",
            "iconUrl": "https://cdn.sandbox.invalid/icons/extras/squirt.png",
        },
    )
    SandboxListingFactory(item=ak, price=Decimal("12.00"), wear=Decimal("0.35"), paint_seed=8)

    awp = CatalogItemFactory(
        id="730-000200",
        market_hash_name="AWP | Asiimov (Field-Tested)",
        item_type="Sniper Rifle",
        reference_price=Decimal("50.00"),
        popularity=80,
    )
    SandboxListingFactory(item=awp, price=Decimal("40.00"), wear=Decimal("0.3"))

    karambit = CatalogItemFactory(
        id="730-000300",
        market_hash_name="Karambit | Doppler (Factory New)",
        item_type="Knife",
        exterior="Factory New",
        rarity="Covert",
        rarity_color="eb4b4b",
        reference_price=Decimal("500.00"),
        is_phased=True,
        popularity=10,
    )
    for phase, paint_index, reference in (
        ("Ruby", 415, "2000.00"),
        ("Phase 2", 419, "600.00"),
        ("Phase 1", 418, "450.00"),
    ):
        CatalogPhaseFactory(
            item=karambit, phase=phase, paint_index=paint_index, reference_price=Decimal(reference)
        )
    SandboxListingFactory(
        item=karambit,
        price=Decimal("550.00"),
        phase="Phase 2",
        paint_index=419,
        wear=Decimal("0.01"),
    )
    SandboxListingFactory(
        item=karambit, price=Decimal("1900.00"), phase="Ruby", paint_index=415, wear=Decimal("0.02")
    )
    SandboxListingFactory(
        item=karambit,
        instant=True,
        bot=bot,
        price=Decimal("1950.00"),
        phase="Ruby",
        paint_index=415,
        wear=Decimal("0.03"),
    )

    glock = CatalogItemFactory(
        id="730-000400",
        market_hash_name="Glock-18 | Fade (Factory New)",
        item_type="Pistol",
        reference_price=Decimal("100.00"),
        stock_limit=1,
        popularity=5,
    )
    SandboxListingFactory(item=glock, instant=True, bot=bot, price=Decimal("95.00"))

    howl = CatalogItemFactory(
        id="730-000500",
        market_hash_name="M4A4 | Howl (Minimal Wear)",
        reference_price=Decimal("3000.00"),
    )
    nova = CatalogItemFactory(
        id="730-000600",
        market_hash_name="Nova | Predator (Field-Tested)",
        reference_price=Decimal("0.12"),
        popularity=2,
    )
    SandboxListingFactory(item=nova, price=Decimal("0.08"))
    p250 = CatalogItemFactory(
        id="730-000700",
        market_hash_name="P250 | Sand Dune (Battle-Scarred)",
        reference_price=Decimal("0.11"),
        popularity=1,
    )
    SandboxListingFactory(item=p250, price=Decimal("0.05"))

    tempered = CatalogItemFactory(
        game=RUST,
        id="252490-000100",
        market_hash_name="Tempered AK47",
        reference_price=Decimal("20.00"),
        popularity=20,
    )
    SandboxListingFactory(item=tempered, price=Decimal("18.00"))
    SandboxListingFactory(item=tempered, instant=True, bot=bot, price=Decimal("17.50"))
    hoodie = CatalogItemFactory(
        game=RUST,
        id="252490-000200",
        market_hash_name="Whiteout Hoodie",
        item_type="Clothing",
        reference_price=Decimal("5.00"),
    )
    door = CatalogItemFactory(
        game=RUST,
        id="252490-000300",
        market_hash_name="Blackout Garage Door",
        item_type="Deployable",
        reference_price=Decimal("1.00"),
        stackable=True,
        popularity=3,
    )
    SandboxListingFactory(item=door, instant=True, bot=bot, price=Decimal("1.10"))
    assert CatalogItem.objects.filter(game=CS).count() == 7
    return World(
        ak=ak,
        awp=awp,
        karambit=karambit,
        glock=glock,
        howl=howl,
        nova=nova,
        p250=p250,
        tempered=tempered,
        hoodie=hoodie,
        door=door,
        ak_instant=ak_instant,
        bot=bot,
    )


@pytest.fixture(params=["secure", "client"])
def kind(request: pytest.FixtureRequest) -> str:
    """Runs a test once through ``/secure/...`` (API key) and once through ``/client/...``."""
    return str(request.param)


@pytest.fixture
def as_alice(api, alice: Actor, kind: str) -> Caller:
    return caller(api, alice, kind)


@pytest.fixture
def as_bob(api, bob: Actor, kind: str) -> Caller:
    return caller(api, bob, kind)
