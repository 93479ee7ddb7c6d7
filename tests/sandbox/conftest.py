"""The sandbox world as a whole: a small seeded market (its bots among it) and two merchants with
money and a receiver that approves their withdrawals."""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from sandbox.services.seeding import sandbox_seed
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, make_actor
from tests.withdrawals.conftest import Desk, envelope, funded
from tests.withdrawals.receiver import Receiver, receiver


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def market(db: None) -> None:
    sandbox_seed(items=20, listings=60)


@pytest.fixture
def alice(market: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Alice"), "1000.00", hooks.url)


@pytest.fixture
def bob(market: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Bob"), "1000.00", hooks.url)


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    return Desk(api, django_capture_on_commit_callbacks)


def data(response, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    body = envelope(response)
    assert body["success"] is True
    return body["data"]


def money(amount: str) -> Decimal:
    return Decimal(amount)
