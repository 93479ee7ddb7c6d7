import uuid
from collections.abc import Iterator
from decimal import Decimal

import pytest

from config.celery import app as celery_app
from merchants.models import Merchant
from tests.factories import Actor, make_actor
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem, SandboxListing
from wallet.services import wallet_admin_credit


@pytest.fixture(autouse=True)
def _eager_celery() -> Iterator[None]:
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


def funded(actor: Actor, amount: str, callback_url: str) -> Actor:
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url=callback_url)
    actor.merchant.refresh_from_db()
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal(amount), reason="test")
    return actor


@pytest.fixture
def alice_funded(db: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Alice"), "1000.00", hooks.url)


@pytest.fixture
def catalog_item(db: None) -> CatalogItem:
    return CatalogItem.objects.create(
        id="730-000001", game=730, market_hash_name="AK-47 | Redline (Field-Tested)",
        name="AK-47 | Redline", item_type="Rifle", rarity="Classified", rarity_color="d32ce6",
        exterior="Field-Tested", icon_url="https://cdn.sandbox.invalid/a.png",
        reference_price=Decimal("40.00"),
    )


def make_listing(item: CatalogItem, price: str, delivery: str = "standard") -> SandboxListing:
    return SandboxListing.objects.create(
        id=str(uuid.uuid4()), item=item, game=item.game, market_hash_name=item.market_hash_name,
        price=Decimal(price), delivery=delivery,
    )
