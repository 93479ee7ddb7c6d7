"""Factories of the sandbox game world: catalog items and phases, marketplace listings, bots."""

import uuid
from decimal import Decimal

import factory
from factory.django import DjangoModelFactory

from sandbox.models import SandboxBot, SandboxListing
from trading.models import CatalogItem, CatalogPhase

CS = 730
RUST = 252490


class CatalogItemFactory(DjangoModelFactory):
    class Meta:
        model = CatalogItem

    game = CS
    id = factory.LazyAttributeSequence(lambda o, n: f"{o.game}-t{n:05d}")
    market_hash_name = factory.Sequence(lambda n: f"Test Item {n}")
    name = factory.LazyAttribute(lambda o: o.market_hash_name)
    item_type = factory.LazyAttribute(lambda o: "Rifle" if o.game == CS else "Weapon")
    rarity = factory.LazyAttribute(lambda o: "Classified" if o.game == CS else "Rare")
    rarity_color = factory.LazyAttribute(lambda o: "d32ce6" if o.game == CS else "4169e1")
    exterior = factory.LazyAttribute(lambda o: "Field-Tested" if o.game == CS else "")
    icon_url = factory.LazyAttribute(lambda o: f"https://cdn.sandbox.invalid/icons/{o.id}.png")
    reference_price = Decimal("10.00")
    is_phased = False
    stackable = False
    stock_limit = 50
    popularity = 0


class CatalogPhaseFactory(DjangoModelFactory):
    class Meta:
        model = CatalogPhase

    item = factory.SubFactory(CatalogItemFactory, is_phased=True)
    phase = "Phase 1"
    paint_index = 418
    reference_price = Decimal("100.00")


class SandboxBotFactory(DjangoModelFactory):
    class Meta:
        model = SandboxBot

    name = factory.Sequence(lambda n: f"Test Bot {n}")
    avatar = factory.Sequence(lambda n: f"https://cdn.sandbox.invalid/test-bots/{n}.png")
    platform_id = factory.Sequence(lambda n: str(76561199100000000 + n))


def _listing_id(o: object, n: int) -> str:
    """UUID-style on the first game, compound (catalog id + sequence) on the second."""
    item = o.item  # type: ignore[attr-defined]
    if item.game == CS:
        return str(uuid.UUID(int=0xA000_0000 + n, version=4))
    return f"{item.id}-{n:08d}"


class SandboxListingFactory(DjangoModelFactory):
    class Meta:
        model = SandboxListing

    class Params:
        instant = factory.Trait(
            delivery=SandboxListing.Delivery.INSTANT,
            bot=factory.SubFactory(SandboxBotFactory),
            preview_token=factory.LazyAttribute(lambda o: "a1b2c3d4" if o.item.game == CS else ""),
        )

    item = factory.SubFactory(CatalogItemFactory)
    id = factory.LazyAttributeSequence(_listing_id)
    game = factory.LazyAttribute(lambda o: o.item.game)
    market_hash_name = factory.LazyAttribute(lambda o: o.item.market_hash_name)
    popularity = factory.LazyAttribute(lambda o: o.item.popularity)
    price = Decimal("10.00")
    delivery = SandboxListing.Delivery.STANDARD
    phase = ""
    paint_index = None
    wear = None
    paint_seed = None
    stickers = factory.LazyFunction(list)
    charm = None
    prop_id = ""
    preview_token = ""
    bot = None
    amount = 1
