"""The store every new trade goes through (``trading.trades.services``), whichever flow makes it:
an externalId is a merchant's once, and the database's own refusal (a concurrent request that
passed the pre-check) answers as the pre-check does."""

from decimal import Decimal

import pytest

from core import clock
from core.errors import DomainError
from tests.factories import make_actor, platform_id, trade_url
from trading.models import Trade
from trading.trades.services import (
    external_id_unused_check,
    trade_draft,
    trade_store,
    trade_total,
)

pytestmark = pytest.mark.django_db


def store(merchant, external_id: str) -> Trade:
    def write() -> Trade:
        trade = trade_draft(
            merchant=merchant,
            type=Trade.Type.WITHDRAW,
            source=Trade.Source.SELF,
            game=730,
            external_id=external_id,
            client=None,
            platform_id=platform_id(42),
            trade_url=trade_url(42),
            external_client_user_id="",
            rows=[],
            total=Decimal("1.00"),
            now=clock.now(),
        )
        trade.save(force_insert=True)
        return trade

    return trade_store(write)


def test_a_taken_external_id_refused_by_the_database_is_external_id_exists():
    merchant = make_actor(name="Alice").merchant
    store(merchant, "order-1")

    with pytest.raises(DomainError) as refused:
        store(merchant, "order-1")  # as a request that passed the pre-check at the same moment

    assert refused.value.key == "EXTERNAL_ID_EXISTS"
    assert Trade.objects.filter(merchant=merchant).count() == 1


def test_an_external_id_is_each_merchants_own():
    alice, bob = make_actor(name="Alice").merchant, make_actor(name="Bob").merchant
    store(alice, "order-1")

    external_id_unused_check(merchant=bob, external_id="order-1")
    store(bob, "order-1")

    with pytest.raises(DomainError) as refused:
        external_id_unused_check(merchant=alice, external_id="order-1")
    assert refused.value.key == "EXTERNAL_ID_EXISTS"
    assert Trade.objects.filter(external_id="order-1").count() == 2


def test_a_trade_worth_nothing_is_refused():
    with pytest.raises(DomainError) as refused:
        trade_total([])
    assert refused.value.key == "INVALID_AMOUNT"
