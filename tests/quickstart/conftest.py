"""The quick-start suite: the API over SQLite, the file cache and the file-system broker, as
``bin/start`` runs it (``DATABASE_URL`` and ``REDIS_URL`` unset, the sandbox on, a VAR_DIR of its
own). ``bin/test`` runs it in a second pytest invocation; the PostgreSQL run never collects it
(tests/conftest.py), and run on any other settings it refuses to start.

One world is built for the whole session (outside the tests' transactions, so every test reads
it and rolls back only what it wrote itself): a small seeded market, two merchants, trades in
several states, crypto deposits and cashouts, ledger rows, webhooks, a verification process.
"""

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count
from rest_framework.test import APIClient

from config.celery import app as celery_app
from core.json import dumps
from ledger.models import Funding
from merchants.models import Merchant
from sandbox.models import SandboxListing
from sandbox.services.seeding import sandbox_seed
from tests.factories import Actor, make_actor, platform_id, trade_url
from tests.withdrawals.conftest import envelope
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem
from wallet.services import wallet_admin_credit

USER = 21  # the partner behind the shop's client token (tests/test_openapi_bodies.py has 11 and 12)
OWNER = 22  # a platform user whose items the shop sells itself
ETH_RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"
RUN_AS_BIN_TEST = (
    "env -u DATABASE_URL -u REDIS_URL SANDBOX=true VAR_DIR=$(mktemp -d) "
    ".venv/bin/pytest tests/quickstart (bin/test runs it after the PostgreSQL run)"
)


def _not_quick_start() -> str | None:
    """Why these settings are not the quick start's, or None."""
    if not settings.QUICKSTART:
        return "DATABASE_URL is set"
    if settings.REDIS_URL:
        return "REDIS_URL is set"
    if not settings.SANDBOX:
        return "SANDBOX is not true"
    if settings.VAR_DIR.resolve() == (settings.BASE_DIR / "var").resolve():
        return "VAR_DIR is the quick start's own var/ (its cache would be cleared)"
    return None


if (problem := _not_quick_start()) is not None:
    raise pytest.UsageError(
        f"tests/quickstart runs on the quick start's settings only: {problem}. Run: "
        + RUN_AS_BIN_TEST
    )


@pytest.fixture(scope="session", autouse=True)
def _on_sqlite(django_db_setup: None) -> None:
    assert connection.vendor == "sqlite"


@pytest.fixture(scope="session", autouse=True)
def _eager_celery() -> Iterator[None]:
    """The worker's tasks run inside the call that hands them over (tests/test_readme.py runs a
    real worker)."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


Capture = Callable[..., AbstractContextManager[Any]]


class Http:
    """The HTTP API as the suite drives it: JSON bodies with Decimals verbatim, and the work each
    call hands over on commit run before it returns (inside a test's transaction that needs
    pytest-django's capture; outside one, commits run it by themselves)."""

    def __init__(self, capture: Capture | None = None) -> None:
        self.api = APIClient()
        self.capture: Capture = capture or (lambda **_: nullcontext())

    def get(self, path: str, params: dict[str, Any] | None = None, *, headers: dict[str, str]):
        return self.api.get(path, params or {}, headers=headers)

    def post(self, path: str, body: Any = None, *, headers: dict[str, str]):
        with self.capture(execute=True):
            if body is None:
                return self.api.post(path, headers=headers)
            return self.api.post(
                path, dumps(body), content_type="application/json", headers=headers
            )


def ok(response, status: int = 200) -> Any:
    """``data`` of a success envelope, numbers as Decimal."""
    assert response.status_code == status, response.content
    body = envelope(response)
    assert body["success"] is True, body
    return body["data"]


@dataclass
class World:
    shop: Actor
    other: Actor
    client: dict[str, str]  # the shop's client token for USER
    hooks: Receiver
    buys: list[dict[str, Any]] = field(default_factory=list)  # self buys, newest last
    client_trades: list[dict[str, Any]] = field(default_factory=list)
    funding_id: str = ""  # the shop's newest DEPOSIT funding
    listed_item: dict[str, str] = field(default_factory=dict)  # reference, marketHashName

    @property
    def user_id(self) -> str:
        return platform_id(USER)


def standard_listings(http: Http, shop: Actor, game: int) -> list[dict[str, Any]]:
    """Listings of distinct items delivered the standard way (the supplier's, cancellable)."""
    page = ok(http.get("/secure/market", {"game": game, "perPage": 300}, headers=shop.headers))
    chosen: dict[str, dict[str, Any]] = {}
    for row in page["items"]:
        if row["offer"]["delivery"] == "standard":
            chosen.setdefault(row["offer"]["reference"], row)
    return list(chosen.values())


def _buy(http: Http, headers: dict[str, str], route: str, listing: dict[str, Any], **body: Any):
    line = {"itemId": listing["id"], "price": listing["offer"]["price"]}
    return ok(http.post(route, {"items": [line], **body}, headers=headers))


def funded_merchant(name: str, callback_url: str, usd: str) -> Actor:
    actor = make_actor(name=name, is_verified=True)
    Merchant.objects.filter(pk=actor.merchant.pk).update(
        callback_url=callback_url, instant_deposits_enabled=True
    )
    actor.merchant.refresh_from_db()
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal(usd), reason="quick start test")
    return actor


def _trades(http: Http, world: World) -> None:
    shop, first_game = world.shop, standard_listings(http, world.shop, 730)
    for n, listing in enumerate(first_game[:4], start=1):
        world.buys.append(
            _buy(
                http,
                shop.headers,
                "/secure/buy",
                listing,
                tradeUrl=trade_url(OWNER),
                externalId=f"buy-{n}",
            )
        )
    # buy-1 completed, buy-2 held, buy-3 delivered (active), buy-4 still pending at the supplier
    for trade, events in zip(
        world.buys,
        (("purchased", "accepted", "hold_ended"), ("purchased", "accepted"), ("purchased",)),
        strict=False,
    ):
        for event in events:
            ok(
                http.post(
                    f"/sandbox/trades/{trade['id']}/events", {"event": event}, headers=shop.headers
                )
            )
    second_game = standard_listings(http, shop, 252490)[0]
    world.buys.append(
        _buy(http, shop.headers, "/secure/buy", second_game, tradeUrl=trade_url(OWNER), game=252490)
    )
    for listing in first_game[4:6]:
        world.client_trades.append(_buy(http, world.client, "/client/trading/withdraw", listing))
    names = [row["marketHashName"] for row in first_game[6:9]]
    for partner in (USER, OWNER):
        ok(
            http.post(
                "/sandbox/platform/users",
                {
                    "platformId": platform_id(partner),
                    "inventory": [{"marketHashName": name, "wear": 0.25} for name in names],
                },
                headers=shop.headers,
            )
        )
    inventory = ok(http.get("/client/inventory", {"acceptedOnly": "true"}, headers=world.client))
    for row in inventory["inventory"][:2]:
        world.client_trades.append(
            ok(
                http.post(
                    "/client/trading/deposit",
                    {"items": [{"itemId": row["id"], "price": row["offer"]["price"]}]},
                    headers=world.client,
                )
            )
        )
    # The other merchant's trade, which no read of the shop may show.
    _buy(
        http,
        world.other.headers,
        "/secure/buy",
        first_game[9],
        tradeUrl=trade_url(USER),
        externalId="buy-1",
    )


def _crypto(http: Http, world: World) -> None:
    shop = world.shop
    address = ok(
        http.get(
            "/secure/crypto/deposit-address",
            {"chain": "ETH", "platformId": world.user_id},
            headers=shop.headers,
        )
    )["address"]
    for amount, confirmations in (("40", 100), ("12.5", 100), ("7.25", 0)):
        ok(
            http.post(
                "/sandbox/crypto/transfers",
                {
                    "chain": "ETH",
                    "token": "USDC",
                    "address": address,
                    "amount": amount,
                    "confirmations": confirmations,
                },
                headers=shop.headers,
            )
        )
    cashout = {"chain": "ETH", "token": "USDC", "address": ETH_RECIPIENT, "amountCents": 2500}
    for n in (1, 2):
        ok(
            http.post(
                "/secure/crypto/withdraw",
                {**cashout, "platformId": world.user_id, "requestId": f"secure-cashout-{n}"},
                headers=shop.headers,
            ),
            status=201,
        )
    ok(
        http.post(
            "/client/crypto/withdraw",
            {**cashout, "requestId": "client-cashout-1"},
            headers=world.client,
        ),
        status=201,
    )


def _item_with_listings(count: int) -> dict[str, str]:
    """A first-game catalog item with at least ``count`` listings (for its second page)."""
    item_id = (
        SandboxListing.objects.filter(game=730)
        .values("item_id")
        .annotate(listings=Count("id"))
        .filter(listings__gte=count)
        .order_by("item_id")
        .values_list("item_id", flat=True)
        .first()
    )
    assert item_id is not None
    name = CatalogItem.objects.get(pk=item_id).market_hash_name
    return {"reference": item_id, "marketHashName": name}


@pytest.fixture(scope="session")
def world(django_db_setup: None, django_db_blocker: Any) -> Iterator[World]:
    with django_db_blocker.unblock(), receiver() as hooks:
        sandbox_seed(items=80, listings=400)
        http = Http()
        shop = funded_merchant("Shop", hooks.url, "5000.00")
        other = funded_merchant("Other", hooks.url, "1000.00")
        token = ok(
            http.post(
                "/auth/authenticate-client",
                {
                    "clientPlatformId": platform_id(USER),
                    "clientTradeUrl": trade_url(USER),
                    "clientData": {"kycHash": "sha256:ann"},
                },
                headers=shop.headers,
            )
        )["token"]
        built = World(
            shop=shop, other=other, client={"Authorization": f"Bearer {token}"}, hooks=hooks
        )
        _trades(http, built)
        _crypto(http, built)
        built.funding_id = str(
            Funding.objects.filter(merchant=shop.merchant, type=Funding.Type.DEPOSIT)
            .latest("created_at")
            .pk
        )
        built.listed_item = _item_with_listings(3)
        ok(  # a verification process under way
            http.post(
                "/client/verification/start", {"email": "ann@example.com"}, headers=built.client
            )
        )
        yield built


@pytest.fixture
def http(db: None, django_capture_on_commit_callbacks: Capture) -> Http:
    return Http(django_capture_on_commit_callbacks)
