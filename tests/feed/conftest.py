"""Feed tests: a real ``manage.py feed`` process on the test database, python-socketio clients,
and the service publishing after its commits, so every test commits (``transaction=True``).
Redis pub/sub channels ignore the database number: this run publishes on a channel of its own,
so other test runs on the machine never cross it."""

import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from config.celery import app as celery_app
from sandbox.models import SandboxListing
from tests.factories import Actor, make_actor, trade_url
from tests.feed.harness import FeedClient, FeedProcess
from tests.withdrawals.conftest import catalog_item, funded, make_listing
from tests.withdrawals.receiver import Receiver, receiver
from trading.models import CatalogItem

FEE = Decimal("1.05")  # a new merchant's 5 % withdraw fee

__all__ = ["catalog_item"]  # a fixture shared with the withdrawal tests


@pytest.fixture(scope="session")
def feed_channel() -> str:
    return f"trading-feed-test:{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def _publish_on_the_test_channel(settings: object, feed_channel: str) -> None:
    settings.FEED_BUS = "redis"  # type: ignore[attr-defined]
    settings.FEED_CHANNEL = feed_channel  # type: ignore[attr-defined]
    settings.FEED_REDIS_URL = settings.REDIS_URL  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _tasks_run_in_the_request() -> Iterator[None]:
    """Webhook deliveries (the approval callback) and purchases run at commit, in the test."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture(scope="module")
def module_feed(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory, feed_channel: str
) -> Iterator[FeedProcess]:
    """One feed process per module (booting takes seconds); tests close their sockets."""
    process = FeedProcess(tmp_path_factory.mktemp("feed") / "feed.log", channel=feed_channel)
    yield process.start()
    process.stop()


@pytest.fixture
def feed(module_feed: FeedProcess, transactional_db: None) -> FeedProcess:
    if not module_feed.process.alive():
        module_feed.start()
    return module_feed


@pytest.fixture
def open_socket(feed: FeedProcess) -> Iterator[Callable[..., FeedClient]]:
    """Connects a client to ``feed`` (or another process), by default with the key as the
    ``apiKey`` query parameter; every client is closed after the test."""
    clients: list[FeedClient] = []

    def connect(
        api_key: str | None = None, *, to: FeedProcess | None = None, how: str = "query"
    ) -> FeedClient:
        client = FeedClient((to or feed).url)
        clients.append(client)
        if api_key is None:
            return client.connect()
        if how == "query":
            return client.connect(query={"apiKey": api_key})
        if how == "header":
            return client.connect(headers={"api-key": api_key})
        return client.connect(auth={"apiKey": api_key})

    yield connect
    for client in clients:
        client.close()


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def alice(transactional_db: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Alice"), "1000.00", hooks.url)


@pytest.fixture
def bob(transactional_db: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Bob"), "1000.00", hooks.url)


@pytest.fixture
def listing(catalog_item: CatalogItem) -> SandboxListing:
    return make_listing(catalog_item, "10.00")


def buy(api: APIClient, actor: Actor, listings: list[SandboxListing]) -> dict:
    """``POST /secure/buy`` at the listings' prices; the approval callback answers 200."""
    items = [{"itemId": row.id, "price": float(row.price * FEE)} for row in listings]
    response = api.post(
        "/secure/buy",
        {"tradeUrl": trade_url(42), "items": items},
        format="json",
        headers=actor.headers,
    )
    assert response.status_code == 200, response.content
    return dict(response.json()["data"])


def world_event(api: APIClient, actor: Actor, trade_id: str, event: str) -> dict:
    """The sandbox world moves a trade (``POST /sandbox/trades/{id}/events``)."""
    response = api.post(
        f"/sandbox/trades/{trade_id}/events", {"event": event}, format="json", headers=actor.headers
    )
    assert response.status_code == 200, response.content
    return dict(response.json()["data"])


def trade_now(api: APIClient, actor: Actor, trade_id: str) -> dict:
    """``GET /secure/trades/{id}`` as the JSON the merchant reads (numbers as written)."""
    response = api.get(f"/secure/trades/{trade_id}", headers=actor.headers)
    assert response.status_code == 200, response.content
    return dict(response.json()["data"])
