"""Webhook, approval and concurrency tests.

Events handed to a worker are collected instead of delivered (``outbox``), so each test decides
when a delivery happens by calling ``webhook_event_deliver`` itself; Celery tasks run eagerly.
Time moves only through the service clock. The callback endpoint is a real HTTP server on
loopback (``hooks``)."""

import base64
import math
import secrets
import socket
from collections.abc import Callable, Iterator
from datetime import datetime

import pytest
from django.db.models import Q
from rest_framework.test import APIClient

from config.celery import app as celery_app
from core import clock
from core.handoffs import HANDOFFS
from merchants.webhooks import delivery
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import WEBHOOK_DELIVERY
from sandbox.models import SandboxListing
from tests.factories import Actor, make_actor, trade_url
from tests.withdrawals.conftest import catalog_item, funded, hooks, make_listing
from tests.withdrawals.receiver import Receiver
from trading.models import CatalogItem

__all__ = ["catalog_item", "hooks"]  # fixtures shared with the withdrawal tests

TRADE_URL = trade_url(42)
LISTING_PRICE = "10.00"
BUY_PRICE = 10.50  # LISTING_PRICE with the default 5 % fee


def webhook_secret() -> str:
    """A secret as merchants get them: ``whsec_`` and standard base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def shop_actor(name: str, callback_url: str, balance: str = "1000.00") -> Actor:
    return funded(make_actor(name=name, webhook_secret=webhook_secret()), balance, callback_url)


@pytest.fixture(autouse=True)
def outbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Event ids handed to a worker after commit, in order; nothing is delivered by itself."""
    scheduled: list[str] = []
    monkeypatch.setitem(HANDOFFS.bindings, WEBHOOK_DELIVERY, scheduled.append)
    # Restored as it was: a suite collecting these tests (the quick start's) runs eagerly.
    was = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield scheduled
    celery_app.conf.task_always_eager = was


@pytest.fixture
def shop(db: None, hooks: Receiver) -> Actor:
    """A verified merchant with 1000.00 available and the receiver as its callback URL."""
    return shop_actor("Shop", hooks.url)


@pytest.fixture
def listing(catalog_item: CatalogItem) -> SandboxListing:
    return make_listing(catalog_item, LISTING_PRICE)


def due_now() -> list[str]:
    """Every event due now, oldest first (the sweep takes turns between merchants)."""
    rows = (
        WebhookEvent.objects.filter(
            status=WebhookEvent.Status.PENDING, next_attempt_at__lte=clock.now()
        )
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=clock.real_now()))
        .order_by("next_attempt_at")
        .values_list("id", flat=True)
    )
    return [str(event_id) for event_id in rows]


@pytest.fixture
def deliver(django_capture_on_commit_callbacks: Callable) -> Callable[..., None]:
    """A worker's delivery of one event (or of every due event), running what it commits."""

    def run(event_id: str | None = None) -> None:
        due = [event_id] if event_id is not None else due_now()
        for one in due:
            with django_capture_on_commit_callbacks(execute=True):
                delivery.webhook_event_deliver(event_id=one)

    return run


@pytest.fixture
def advance_to(clock_advance: Callable[[int], None]) -> Callable[[datetime], None]:
    """Moves the service clock just past a moment."""

    def run(moment: datetime) -> None:
        clock_advance(max(1, math.ceil((moment - clock.now()).total_seconds()) + 1))

    return run


@pytest.fixture
def past_lease(time_passes: Callable[[int], None]) -> Callable[[datetime], None]:
    """Time passes just past a lease's end (leases are real time: the sandbox clock alone never
    ends one)."""

    def run(lease_until: datetime) -> None:
        time_passes(max(1, math.ceil((lease_until - clock.real_now()).total_seconds()) + 1))

    return run


def buy(api: APIClient, actor: Actor, listing: SandboxListing, **fields: object):  # type: ignore[no-untyped-def]
    """POST /secure/buy of one listing at its current price."""
    return api.post(
        "/secure/buy",
        {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": BUY_PRICE}], **fields},
        format="json",
        headers=actor.headers,
    )


def bought(api: APIClient, actor: Actor, listing: SandboxListing) -> str:
    response = buy(api, actor, listing)
    assert response.status_code == 200, response.content
    return str(response.json()["data"]["id"])


def approval_event(trade_id: str) -> WebhookEvent:
    return WebhookEvent.objects.get(subject_id=trade_id, is_approval=True)


def trade_events(trade_id: str) -> list[WebhookEvent]:
    return list(WebhookEvent.objects.filter(subject_id=trade_id).order_by("sequence"))


def closed_port_url() -> str:
    """A loopback URL nobody listens on: the port was bound, then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hooks"
