import uuid
from collections.abc import Iterator
from decimal import Decimal

import pytest

from merchants.models import Merchant
from sandbox.models import SandboxListing
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, make_actor
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem
from wallet.services import wallet_admin_credit


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
        id="730-000001",
        game=730,
        market_hash_name="AK-47 | Redline (Field-Tested)",
        name="AK-47 | Redline",
        item_type="Rifle",
        rarity="Classified",
        rarity_color="d32ce6",
        exterior="Field-Tested",
        icon_url="https://cdn.sandbox.invalid/a.png",
        reference_price=Decimal("40.00"),
    )


def make_listing(item: CatalogItem, price: str, delivery: str = "standard") -> SandboxListing:
    return SandboxListing.objects.create(
        id=str(uuid.uuid4()),
        item=item,
        game=item.game,
        market_hash_name=item.market_hash_name,
        price=Decimal(price),
        delivery=delivery,
    )


# ---------------------------------------------------------------------------------------------
# Helpers of the withdrawal suites (create errors, client withdrawals, quick, cancels, history,
# isolation, sandbox events). Imports stay local so this block only appends to the module.

RUST_GAME = 252490


class Desk:
    """The HTTP API as the tests drive it: every call runs the work it schedules on commit
    (webhook deliveries, the approval's purchase, cancel completion) before it returns."""

    def __init__(self, api, capture) -> None:
        self.api = api
        self.capture = capture

    def post(self, path: str, body: object = None, *, headers: dict[str, str]):
        """``body`` is sent as JSON with Decimals verbatim (``10.500`` stays ``10.500``)."""
        from core.json import dumps

        with self.capture(execute=True):
            if body is None:
                return self.api.post(path, headers=headers)
            return self.api.post(
                path, dumps(body), content_type="application/json", headers=headers
            )

    def get(self, path: str, *, headers: dict[str, str], params: dict | None = None):
        return self.api.get(path, params or {}, headers=headers)

    def run(self, work):
        """A service call whose on-commit work runs, as a worker's would."""
        with self.capture(execute=True):
            return work()


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    return Desk(api, django_capture_on_commit_callbacks)


@pytest.fixture
def bob_hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def bob_funded(db: None, bob_hooks: Receiver) -> Actor:
    """A second merchant with its own receiver and a 10 % withdraw fee (alice keeps 5 %)."""
    actor = funded(make_actor(name="Bob"), "1000.00", bob_hooks.url)
    Merchant.objects.filter(pk=actor.merchant.pk).update(withdraw_fee_rate=Decimal("0.1000"))
    actor.merchant.refresh_from_db()
    return actor


@pytest.fixture
def rust_item(db: None) -> CatalogItem:
    return CatalogItem.objects.create(
        id="252490-000001",
        game=RUST_GAME,
        market_hash_name="Tempered AK47",
        name="Tempered AK47",
        item_type="Weapon",
        rarity="Rare",
        rarity_color="4169e1",
        icon_url="https://cdn.sandbox.invalid/r.png",
        reference_price=Decimal("20.00"),
    )


def make_rust_listing(item: CatalogItem, price: str, sequence: int = 1) -> SandboxListing:
    """Second-game listings have compound ids: <catalog id>-<8 digits>."""
    return SandboxListing.objects.create(
        id=f"{item.id}-{sequence:08d}",
        item=item,
        game=item.game,
        market_hash_name=item.market_hash_name,
        price=Decimal(price),
        delivery="standard",
    )


def envelope(response) -> dict:
    """The response envelope with every number as a Decimal, so money compares exactly."""
    import json

    return json.loads(response.content, parse_float=Decimal)


def ok_data(response):
    """``data`` of a 200 success envelope (numbers as Decimal)."""
    assert response.status_code == 200, response.content
    body = envelope(response)
    assert body["success"] is True, body
    return body["data"]


def client_headers(api, actor: Actor, partner: int = 1, client_id: str | None = None) -> dict:
    """``Authorization`` of a fresh client token of ``actor`` for the user behind ``partner``."""
    from tests.factories import auth_body

    body = auth_body(partner, clientId=client_id) if client_id else auth_body(partner)
    response = api.post("/auth/authenticate-client", body, format="json", headers=actor.headers)
    return {"Authorization": f"Bearer {ok_data(response)['token']}"}


def money(actor: Actor) -> dict[str, Decimal]:
    from wallet.selectors import wallet_balances

    return wallet_balances(merchant=actor.merchant)


def service_money(kind: str) -> Decimal:
    """Balance of a service account (supplier, revenue, ...), 0 before it exists."""
    from wallet.models import Account

    row = Account.objects.filter(merchant__isnull=True, kind=kind).first()
    return row.balance if row is not None else Decimal("0.00")


def wallet_clean() -> bool:
    from wallet.selectors import wallet_invariants_check

    return wallet_invariants_check().clean


def sandbox_event(desk: Desk, actor: Actor, trade_ref: str, event: str, item_ids=None):
    body: dict[str, object] = {"event": event}
    if item_ids is not None:
        body["itemIds"] = item_ids
    return desk.post(f"/sandbox/trades/{trade_ref}/events", body, headers=actor.headers)


def advance_minutes(desk: Desk, actor: Actor, minutes: int) -> dict:
    return ok_data(desk.post("/sandbox/clock/advance", {"minutes": minutes}, headers=actor.headers))


def set_platform_user(desk: Desk, actor: Actor, partner: int, **fields: object) -> None:
    from tests.factories import platform_id

    response = desk.post(
        "/sandbox/platform/users",
        {"platformId": platform_id(partner), **fields},
        headers=actor.headers,
    )
    assert ok_data(response)["configured"] is True
