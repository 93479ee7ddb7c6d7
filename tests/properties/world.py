"""The world the trading state machine runs in: two merchants with funded wallets and their own
callback receivers, a supplier market, a bot and two platform users with known inventories.
Built once per test; every example runs inside a savepoint that is rolled back."""

from dataclasses import dataclass, field
from decimal import Decimal

from merchants.models import Merchant
from sandbox.models import SandboxPlatformUser
from tests.factories import Actor, make_actor, platform_id
from tests.trading.factories import CatalogItemFactory, SandboxBotFactory
from tests.withdrawals.conftest import funded, make_listing, make_rust_listing
from tests.withdrawals.receiver import Receiver
from trading.pricing import deposit_price, fee_inclusive

AK = "AK-47 | Redline (Field-Tested)"
KNIFE = "Karambit | Fade"
CHEAP = "Sticker | Cheap"
FUNDS = Decimal("250.00")
CS = 730
RUST = 252490
CENT = Decimal("0.01")


@dataclass
class Party:
    """A merchant as the machine drives it."""

    name: str
    actor: Actor = field(repr=False)
    receiver: Receiver = field(repr=False)
    fee_rate: Decimal = field(repr=False)
    margin_rate: Decimal = field(repr=False)

    @property
    def headers(self) -> dict[str, str]:
        return self.actor.headers


@dataclass(frozen=True)
class Listed:
    id: str
    game: int
    sourcing_price: Decimal


@dataclass(frozen=True)
class World:
    parties: tuple[Party, Party]
    listings: tuple[Listed, ...]
    quick_item: str
    quick_prices: tuple[Decimal, ...]  # maxPrice per unit: under, between and over the listings
    # partner -> inventory item ids (``<appid>_<assetId>``) and their reference prices
    inventories: dict[int, dict[str, Decimal]]

    def listings_of(self, game: int) -> list[Listed]:
        return [listing for listing in self.listings if listing.game == game]

    def withdraw_price(self, party: Party, listing: Listed) -> Decimal:
        return fee_inclusive(listing.sourcing_price, party.fee_rate)

    def deposit_price(self, party: Party, partner: int, item_id: str) -> Decimal:
        return deposit_price(self.inventories[partner][item_id], party.margin_rate)


def _party(name: str, receiver: Receiver, **fields: object) -> Party:
    actor = funded(make_actor(name=name), str(FUNDS), receiver.url)
    Merchant.objects.filter(pk=actor.merchant.pk).update(**fields)
    actor.merchant.refresh_from_db()
    return Party(
        name=name,
        actor=actor,
        receiver=receiver,
        fee_rate=actor.merchant.withdraw_fee_rate,
        margin_rate=actor.merchant.deposit_margin_rate,
    )


def world_build(alice_receiver: Receiver, bob_receiver: Receiver) -> World:
    """Alice: 5 % withdraw fee, 10 % deposit margin, instant deposits on. Bob: 10 %, 20 %, off."""
    alice = _party("Alice", alice_receiver, instant_deposits_enabled=True)
    bob = _party(
        "Bob",
        bob_receiver,
        withdraw_fee_rate=Decimal("0.1000"),
        deposit_margin_rate=Decimal("0.2000"),
    )
    SandboxBotFactory(name="Bot Atlas", platform_id="76561199100099999")
    ak = CatalogItemFactory(id="730-000100", market_hash_name=AK, reference_price=Decimal("40"))
    CatalogItemFactory(
        id="730-000200", market_hash_name=KNIFE, reference_price=Decimal("500"), stock_limit=1
    )
    CatalogItemFactory(id="730-000300", market_hash_name=CHEAP, reference_price=Decimal("0.05"))
    door = CatalogItemFactory(
        id="252490-000100", game=RUST, market_hash_name="Sheet Metal Door", stackable=True
    )
    prices = ("9.00", "9.50", "10.00", "11.00", "12.00", "15.00", "20.00", "30.00", "45.00")
    listings = [make_listing(ak, price) for price in prices]
    listings += [make_rust_listing(door, "2.00", n) for n in (1, 2)]
    owner = {
        **{f"730_1000000{n:03d}": Decimal("40") for n in range(4)},
        "730_2000000001": Decimal("500"),
        "730_2000000002": Decimal("500"),
        "730_3000000001": Decimal("0.05"),  # worth less than the 0.10 floor: not accepted
    }
    other = {f"730_7000000{n:03d}": Decimal("40") for n in range(3)}
    names = {"1000000": AK, "2000000": KNIFE, "3000000": CHEAP, "7000000": AK}
    for party in (alice, bob):
        for partner, items in ((1, owner), (2, other)):
            SandboxPlatformUser.objects.create(
                merchant=party.actor.merchant,
                platform_id=platform_id(partner),
                inventory=[
                    {"marketHashName": names[item[4:11]], "assetId": item[4:]} for item in items
                ],
            )
    return World(
        parties=(alice, bob),
        listings=tuple(Listed(row.id, row.game, row.price) for row in listings),
        quick_item=ak.id,
        quick_prices=(Decimal("8.00"), Decimal("11.00"), Decimal("16.00"), Decimal("40.00")),
        inventories={1: owner, 2: other},
    )
