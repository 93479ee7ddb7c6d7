"""A trade's change returns its event and tells no one (issue 42): the trade core stores the
change, its audit trail and its sequence number; the channels (``trade_events_publish``) write
the webhook, publish on the feed and count, in the transaction of the change."""

from decimal import Decimal

import pytest
from django.db import transaction

from core import clock
from merchants.webhooks.models import WebhookEvent
from tests.factories import make_actor, trade_url
from trading.models import Status, Trade, TradeEvent, TradeItem
from trading.trades import channels
from trading.trades.channels import HANDLERS, trade_events_publish
from trading.trades.events import TradeChanged, TradeCreated, TradeFact
from trading.trades.services import Move, trade_apply, trade_draft, trade_insert, trade_lock

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch) -> list[tuple[dict, dict]]:
    """The feed's messages, as the channels hand them over."""
    messages: list[tuple[dict, dict]] = []
    monkeypatch.setattr(
        channels, "feed_publish_on_commit", lambda header, data: messages.append((header, data))
    )
    return messages


def created(*, asks_approval: bool = False, items_known: bool = True) -> TradeCreated:
    merchant = make_actor(name="Alice").merchant
    rows = [TradeItem(public_id="listing-1", price=Decimal("10.00"), amount=1, appid=730)]
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
        rows=rows,
        total=Decimal("10.00"),
        now=clock.now(),
    )
    return trade_insert(
        trade=trade, items=rows, asks_approval=asks_approval, items_known=items_known
    )


def test_a_stored_trade_is_numbered_and_told_only_when_published(published):
    with transaction.atomic():
        event = created(asks_approval=True)
        assert (event.sequence, event.trade.next_sequence) == (1, 2)
        assert not WebhookEvent.objects.exists()
        assert not published
        trade_events_publish(event)
    (webhook,) = WebhookEvent.objects.all()
    assert (webhook.type, webhook.sequence, webhook.is_approval) == ("trade.initiated", 1, True)
    assert webhook.payload["trade"]["items"][0]["id"] == "listing-1"
    ((header, data),) = published
    assert (header["sequence"], data["trade"]["id"]) == (1, str(event.trade.id))
    # The trade answers its items without a query, for the response.
    assert list(event.trade.items.all()) == event.items


def test_a_move_returns_its_change_with_the_audit_trail_written(published):
    trade_id = str(created().trade.id)
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        change = trade_apply(
            trade=trade,
            items=items,
            actor="merchant",
            kind="approved",
            moves=[Move(items[0], Status.PENDING)],
            detail={"reason": "fine"},
        )
        assert isinstance(change, TradeChanged)
        assert (change.before, change.sequence, change.kind, change.actor, change.detail) == (
            Status.INITIATED,
            2,
            "approved",
            "merchant",
            {"reason": "fine"},
        )
        assert TradeEvent.objects.get(trade_id=trade_id).to_status == Status.PENDING
        assert not WebhookEvent.objects.exists()
        assert not published
        trade_events_publish(change)
    (webhook,) = WebhookEvent.objects.all()
    assert (webhook.type, webhook.sequence, webhook.is_approval) == ("trade.pending", 2, False)
    assert Trade.objects.get(pk=trade_id).next_sequence == 3


def test_an_edit_without_a_move_is_told_as_updated(published):
    trade_id = str(created().trade.id)
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        items[0].external_id = "row-1"
        change = trade_apply(
            trade=trade, items=items, actor="staff", kind="edited", moves=[], changed=items
        )
        trade_events_publish(change)
    (webhook,) = WebhookEvent.objects.all()
    assert (webhook.type, webhook.sequence) == ("trade.updated", 2)


def test_a_trade_stored_without_its_items_known_reads_them_back(django_assert_num_queries):
    trade = created(items_known=False).trade
    with django_assert_num_queries(1):
        assert [item.public_id for item in trade.items.all()] == ["listing-1"]


def test_every_kind_of_event_has_its_channels():
    assert set(HANDLERS) == set(TradeFact.__args__)
