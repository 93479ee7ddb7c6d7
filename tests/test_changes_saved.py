"""A move writes only the columns it changed (issue 32: a trade's full-row UPDATE of 35 columns
was built and compiled for the two or three a move changes), and nothing it changed is lost:
values changed in place (JSON), columns assigned after a partial load, a second save."""

import re
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from core import clock
from core.db import changes_save
from tests.factories import make_actor, trade_url
from trading.models import Trade, TradeItem
from trading.trades.services import trade_draft, trade_lock

pytestmark = pytest.mark.django_db


@pytest.fixture
def trade_id() -> str:
    merchant = make_actor(name="Alice").merchant
    make_actor(name="Bob")
    row = TradeItem(public_id="listing-1", price=Decimal("10.00"), amount=1, appid=730)
    trade = trade_draft(
        merchant=merchant,
        type=Trade.Type.WITHDRAW,
        source=Trade.Source.SELF,
        game=730,
        external_id="",
        client=None,
        platform_id="76561198000000001",
        trade_url=trade_url(1),
        external_client_user_id="",
        rows=[row],
        total=Decimal("10.00"),
        now=clock.now(),
        bot_info={"name": "bot-1", "seen": []},
    )
    changes_save(trade)
    TradeItem.objects.bulk_create([row])
    return str(trade.pk)


def updates(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]


def set_columns(sql: str) -> set[str]:
    assignments = sql.split(" SET ", 1)[1].rsplit(" WHERE ", 1)[0]
    return set(re.findall(r'"(\w+)" = ', assignments))


def test_a_loaded_trade_writes_only_what_changed(trade_id):
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        trade.status = "pending"
        trade.bot_info["seen"].append("offer-1")  # changed in place
        items[0].status = "pending"
        with CaptureQueriesContext(connection) as queries:
            changes_save(trade)
            changes_save(items[0])
            changes_save(trade)  # nothing changed since: no statement
    trade_update, item_update = updates(queries)
    assert set_columns(trade_update) == {"status", "bot_info"}
    assert set_columns(item_update) == {"status"}
    stored = Trade.objects.get(pk=trade_id)
    assert (stored.status, stored.bot_info) == ("pending", {"name": "bot-1", "seen": ["offer-1"]})
    assert TradeItem.objects.get(trade_id=trade_id).status == "pending"


def test_a_column_assigned_after_a_partial_load_is_written(trade_id):
    trade = Trade.objects.only("id", "status").get(pk=trade_id)
    trade.error = "EXPIRED"  # deferred, then assigned
    with CaptureQueriesContext(connection) as queries:
        changes_save(trade)
    (update,) = updates(queries)
    assert set_columns(update) == {"error"}
    assert Trade.objects.get(pk=trade_id).error == "EXPIRED"


def test_a_new_trade_is_inserted_whole(trade_id):
    stored = Trade.objects.get(pk=trade_id)
    assert (stored.total_price, stored.client_trade_url) == (Decimal("10.00"), trade_url(1))
