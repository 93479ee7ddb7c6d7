"""Fixtures of the deposit suites.

``alice`` (deposit margin 10 %, instant deposits on) and ``bob`` (margin 20 %) each have a
callback receiver. In both merchants' sandbox worlds the user behind partner 1 (``OWNER``) holds
a known inventory of the catalog items below; partner 2 (``OTHER``) holds its own.
"""

from collections.abc import Iterator
from decimal import Decimal

import pytest

from merchants.models import Client, Merchant
from sandbox.models import SandboxBot, SandboxPlatformUser
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, make_actor, platform_id, trade_url
from tests.trading.factories import RUST, CatalogItemFactory, SandboxBotFactory
from tests.withdrawals.conftest import Desk, client_headers, ok_data
from tests.withdrawals.receiver import Receiver, receiver
from trading.accounts.selectors.inventory import inventory_cache_forget
from trading.models import CatalogItem

OWNER = 1
OTHER = 2
AK_ASSETS = [f"1000000{n:03d}" for n in range(30)]


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    return Desk(api, django_capture_on_commit_callbacks)


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def bob_hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


def _merchant(name: str, url: str, **fields: object) -> Actor:
    actor = make_actor(name=name)
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url=url, **fields)
    actor.merchant.refresh_from_db()
    return actor


@pytest.fixture
def alice(db: None, hooks: Receiver) -> Actor:
    return _merchant("Alice", hooks.url, instant_deposits_enabled=True)


@pytest.fixture
def bob(db: None, api, bob_hooks: Receiver) -> Actor:
    actor = _merchant("Bob", bob_hooks.url, deposit_margin_rate=Decimal("0.2000"))
    configure_users(api, actor)
    return actor


@pytest.fixture
def bot(db: None) -> SandboxBot:
    return SandboxBotFactory(name="Bot Atlas", platform_id="76561199100099999")


@pytest.fixture
def ak(db: None) -> CatalogItem:
    """Deposit price 36.00 for alice (40.00 less 10 %), 32.00 for bob."""
    return CatalogItemFactory(
        id="730-000100",
        market_hash_name="AK-47 | Redline (Field-Tested)",
        reference_price=Decimal("40.00"),
    )


@pytest.fixture
def knife(db: None) -> CatalogItem:
    """The service holds none and takes at most one."""
    return CatalogItemFactory(
        id="730-000200",
        market_hash_name="Karambit | Fade",
        reference_price=Decimal("500.00"),
        stock_limit=1,
    )


@pytest.fixture
def cheap(db: None) -> CatalogItem:
    """Worth less than the 0.10 USD floor after the margin."""
    return CatalogItemFactory(
        id="730-000300", market_hash_name="Sticker | Cheap", reference_price=Decimal("0.05")
    )


@pytest.fixture
def door(db: None) -> CatalogItem:
    return CatalogItemFactory(
        id="252490-000100",
        game=RUST,
        market_hash_name="Sheet Metal Door",
        reference_price=Decimal("2.00"),
        stackable=True,
    )


def owner_inventory() -> list[dict[str, object]]:
    return [
        *({"marketHashName": "AK-47 | Redline (Field-Tested)", "assetId": a} for a in AK_ASSETS),
        {"marketHashName": "Karambit | Fade", "assetId": "2000000001"},
        {"marketHashName": "Karambit | Fade", "assetId": "2000000002"},
        {"marketHashName": "Sticker | Cheap", "assetId": "3000000001"},
        {"marketHashName": "Unknown Thing", "assetId": "4000000001"},
        {
            "marketHashName": "AK-47 | Redline (Field-Tested)",
            "assetId": "5000000001",
            "tradable": False,
        },
        {"marketHashName": "Sheet Metal Door", "assetId": "6000000001", "amount": 40, "game": RUST},
        {"marketHashName": "Sheet Metal Door", "assetId": "6000000002", "game": RUST},
    ]


def configure_users(api, actor: Actor) -> None:
    """Both users' inventories in the merchant's world (`POST /sandbox/platform/users`)."""
    other = [
        {"marketHashName": "AK-47 | Redline (Field-Tested)", "assetId": f"7000000{n:03d}"}
        for n in range(5)
    ]
    for partner, inventory in ((OWNER, owner_inventory()), (OTHER, other)):
        response = api.post(
            "/sandbox/platform/users",
            {"platformId": platform_id(partner), "inventory": inventory},
            format="json",
            headers=actor.headers,
        )
        ok_data(response)


def configure_owner(**fields: object) -> None:
    """Change the owner in every merchant's world; their next inventory reads fetch afresh."""
    rows = SandboxPlatformUser.objects.filter(platform_id=platform_id(OWNER))
    rows.update(**fields)
    for merchant in Merchant.objects.filter(pk__in=rows.values("merchant_id")):
        inventory_cache_forget(merchant=merchant, platform_id=platform_id(OWNER))


def fleet(api, actor: Actor, status: str) -> None:
    """Every bot takes ``status`` in the merchant's world (``POST /sandbox/bots``)."""
    response = api.post("/sandbox/bots", {"status": status}, format="json", headers=actor.headers)
    ok_data(response)


@pytest.fixture
def world(
    db: None,
    api,
    alice: Actor,
    bot: SandboxBot,
    ak: CatalogItem,
    knife: CatalogItem,
    cheap: CatalogItem,
    door: CatalogItem,
) -> None:
    """The bot online and both users' inventories (in alice's world; ``bob`` brings his)."""
    configure_users(api, alice)


def ak_item(n: int = 0) -> str:
    return f"730_{AK_ASSETS[n]}"


@pytest.fixture
def owner(api, alice: Actor, world: None) -> dict[str, str]:
    """Alice's client token for the owner (a fresh client with no risk data)."""
    return client_headers(api, alice, OWNER)


def authenticate(api, actor: Actor, partner: int, **client_data: object) -> dict[str, str]:
    from tests.factories import auth_body

    body = auth_body(partner, clientData=client_data) if client_data else auth_body(partner)
    response = api.post("/auth/authenticate-client", body, format="json", headers=actor.headers)
    return {"Authorization": f"Bearer {ok_data(response)['token']}"}


def deposit(desk: Desk, headers: dict[str, str], *items: str, price: str = "36.00", **body):
    return desk.post(
        "/client/trading/deposit",
        {"items": [{"itemId": i, "price": Decimal(price)} for i in items], **body},
        headers=headers,
    )


def sell(desk: Desk, actor: Actor, *items: str, price: str = "36.00", partner: int = OWNER, **body):
    return desk.post(
        "/secure/sell",
        {
            "tradeUrl": trade_url(partner),
            "items": [{"itemId": i, "price": Decimal(price)} for i in items],
            **body,
        },
        headers=actor.headers,
    )


def trade_of(desk: Desk, headers: dict[str, str], trade_id: str) -> dict:
    return ok_data(desk.get(f"/client/trades/{trade_id}", headers=headers))


def client_row(actor: Actor, partner: int) -> Client:
    return Client.objects.get(merchant=actor.merchant, platform_id=platform_id(partner))
