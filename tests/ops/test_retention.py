"""Retention (docs/ops/retention.md): each growing table's purge deletes the rows past their
retention, in batches walked along an indexed time column, and never what is still owed or
what money and disputes need: a pending webhook, a trade in flight, a hold's moves, a trade's
own row and its money rows."""

import re
import uuid
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.utils import timezone

from core import clock
from core.retention import Retention, _statements
from core.tasks import purge_sessions
from merchants.models import IdempotentRequest, Merchant, RateLimitWindow
from merchants.ratelimits import rate_limit_windows_prune
from merchants.services import idempotent_requests_prune
from merchants.verification.models import IdentityNotification
from merchants.verification.services import verification_notifications_prune
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from merchants.webhooks.outbox import ENDED_EVENTS
from merchants.webhooks.tasks import purge_ended_webhooks
from tests.factories import make_actor, platform_id, trade_url
from trading.models import Trade, TradeEvent
from trading.services.retention import FINISHED_TRADE_EVENTS
from trading.tasks import purge_trade_events
from wallet.models import Account, Posting, Transfer
from wallet.services import Move, account_get, transfer_post

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def webhook_event(merchant: Merchant, status: str, age: timedelta, attempts: int = 1) -> str:
    created = clock.now() - age
    event = WebhookEvent.objects.create(
        merchant=merchant,
        type="trade.completed",
        subject_type="trade",
        subject_id=str(uuid.uuid4()),
        sequence=1,
        payload={},
        status=status,
        attempts=attempts,
        created_at=created,
        next_attempt_at=created if status == "pending" else None,
    )
    for attempt in range(1, attempts + 1):
        WebhookDelivery.objects.create(
            event=event, attempt=attempt, url="https://example.com/", created_at=created
        )
    return str(event.pk)


def stored_trade(merchant: Merchant, status: str) -> Trade:
    now = clock.now()
    return Trade.objects.create(
        merchant=merchant,
        type="deposit",
        source="self",
        status=status,
        game=730,
        client_platform_id=platform_id(42),
        client_trade_url=trade_url(42),
        total_price=Decimal("5.00"),
        created_at=now - 800 * DAY,
        updated_at=now - 800 * DAY,
    )


def trade_event(trade: Trade, age: timedelta, from_status: str, to_status: str) -> int:
    event = TradeEvent.objects.create(
        trade=trade,
        kind="moved",
        from_status=from_status,
        to_status=to_status,
        actor="system",
        created_at=clock.now() - age,
    )
    return event.pk


def remaining(model: type, ids: list) -> set:
    return set(model.objects.filter(pk__in=ids).values_list("pk", flat=True))


class TestWebhookEvents:
    def test_ended_events_past_retention_go_with_their_attempts_pending_ones_stay(self, settings):
        alice, bob = make_actor(name="Alice").merchant, make_actor(name="Bob").merchant
        old = 91 * DAY  # the default keeps them 90 days
        gone = [
            webhook_event(alice, "delivered", old, attempts=2),
            webhook_event(bob, "failed", old, attempts=3),
        ]
        kept = [
            webhook_event(alice, "pending", 400 * DAY, attempts=5),  # still owed
            webhook_event(bob, "delivered", 89 * DAY),
            webhook_event(alice, "failed", 10 * DAY),
        ]

        assert purge_ended_webhooks.apply().get() == 2

        assert remaining(WebhookEvent, gone + kept) == {uuid.UUID(e) for e in kept}
        # Only this test's attempts: the quick start's suite keeps a world of its own committed.
        attempts = WebhookDelivery.objects.filter(event_id__in=gone + kept)
        assert set(attempts.values_list("event_id", flat=True)) == {uuid.UUID(e) for e in kept}
        assert attempts.count() == 5 + 1 + 1

    def test_a_run_goes_on_batch_after_batch_until_nothing_is_left(self, settings):
        """Each batch goes on from the newest time the one before deleted: rows of that same
        time it did not reach are still taken, a kept row among them stays."""
        settings.RETENTION_BATCH_ROWS = 2
        merchant = make_actor(name="Alice").merchant
        old = [webhook_event(merchant, "delivered", (100 + n) * DAY) for n in range(5)]
        same = [webhook_event(merchant, "failed", 95 * DAY) for _ in range(5)]
        owed = webhook_event(merchant, "pending", 95 * DAY)
        WebhookEvent.objects.filter(pk__in=[*same, owed]).update(created_at=clock.now() - 95 * DAY)

        assert purge_ended_webhooks.apply().get() == 10
        assert remaining(WebhookEvent, old + same + [owed]) == {uuid.UUID(owed)}

    def test_a_spent_budget_stops_the_run_after_a_batch_and_the_next_run_goes_on(self, settings):
        settings.RETENTION_BATCH_ROWS = 2
        settings.RETENTION_RUN_SECONDS = 0
        merchant = make_actor(name="Alice").merchant
        old = [webhook_event(merchant, "delivered", (100 + n) * DAY) for n in range(5)]

        assert purge_ended_webhooks.apply().get() == 2
        # Oldest first: the two oldest went.
        assert remaining(WebhookEvent, old) == {uuid.UUID(e) for e in old[:3]}
        assert purge_ended_webhooks.apply().get() == 2
        assert purge_ended_webhooks.apply().get() == 1
        assert remaining(WebhookEvent, old) == set()

    def test_zero_days_keeps_them_for_ever(self, settings):
        settings.RETENTION_WEBHOOK_EVENTS_DAYS = 0
        merchant = make_actor(name="Alice").merchant
        event = webhook_event(merchant, "delivered", 5000 * DAY)

        assert purge_ended_webhooks.apply().get() == 0
        assert remaining(WebhookEvent, [event]) == {uuid.UUID(event)}


class TestTradeEvents:
    def test_a_finished_trades_old_timeline_goes_its_hold_moves_and_the_trade_stay(self):
        alice, bob = make_actor(name="Alice").merchant, make_actor(name="Bob").merchant
        finished = stored_trade(alice, "completed")
        in_flight = stored_trade(bob, "hold")
        old, recent = 731 * DAY, 700 * DAY  # the default keeps them 730 days
        gone = [
            trade_event(finished, old, "", "initiated"),
            trade_event(finished, old, "initiated", "pending"),
            trade_event(finished, old, "pending", "active"),
        ]
        kept = [
            trade_event(finished, old, "active", "hold"),  # check_wallet reads the hold's moves
            trade_event(finished, old, "hold", "completed"),
            trade_event(in_flight, old, "", "initiated"),  # the trade is not finished
            trade_event(in_flight, old, "active", "hold"),
        ]
        canceled = stored_trade(bob, "canceled")
        kept.append(trade_event(canceled, recent, "", "canceled"))
        gone.append(trade_event(canceled, old, "", "initiated"))
        money = transfer_post(
            kind="bench",
            cause_type="trade",
            cause_id=str(finished.pk),
            moves=[
                Move(
                    account_get(merchant=None, kind=Account.Kind.WORLD),
                    account_get(merchant=alice, kind=Account.Kind.AVAILABLE),
                    Decimal("5.00"),
                )
            ],
        )

        assert purge_trade_events.apply().get() == len(gone)

        assert remaining(TradeEvent, gone + kept) == set(kept)
        assert Trade.objects.filter(pk__in=[finished.pk, in_flight.pk, canceled.pk]).count() == 3
        assert Transfer.objects.filter(pk=money.pk).exists()
        assert Posting.objects.filter(transfer=money).count() == 2

    def test_zero_days_keeps_them_for_ever(self, settings):
        settings.RETENTION_TRADE_EVENTS_DAYS = 0
        trade = stored_trade(make_actor(name="Alice").merchant, "completed")
        event = trade_event(trade, 5000 * DAY, "", "initiated")

        assert purge_trade_events.apply().get() == 0
        assert remaining(TradeEvent, [event]) == {event}


def test_expired_idempotency_keys_go_in_batches_live_ones_stay(settings):
    settings.RETENTION_BATCH_ROWS = 2
    alice, bob = make_actor(name="Alice").merchant, make_actor(name="Bob").merchant
    now = clock.now()

    def key(merchant: Merchant, name: str, expires: datetime) -> int:
        return IdempotentRequest.objects.create(
            merchant=merchant,
            key=name,
            fingerprint="f" * 64,
            claim=uuid.uuid4(),
            request_id="r",
            created_at=expires - DAY,
            expires_at=expires,
        ).pk

    gone = [key(alice, f"a{n}", now - n * timedelta(minutes=1) - DAY) for n in range(3)]
    kept = [key(bob, "b", now + timedelta(minutes=1)), key(alice, "c", now + DAY)]

    assert idempotent_requests_prune(now=now) == 3
    assert remaining(IdempotentRequest, gone + kept) == set(kept)


def test_ended_rate_limit_windows_go_open_ones_stay(settings):
    settings.RETENTION_BATCH_ROWS = 2
    now = int(timezone.now().timestamp())
    gone = [
        RateLimitWindow.objects.create(key=f"k{n}", slot=n, expires_at=now - 10 - n).pk
        for n in range(3)
    ]
    kept = [RateLimitWindow.objects.create(key="k", slot=9, expires_at=now + 60).pk]

    # At least these three: the quick start's suite keeps windows of its own world committed.
    assert rate_limit_windows_prune() >= 3
    assert remaining(RateLimitWindow, gone + kept) == set(kept)


def test_identity_notifications_past_the_replay_window_go(settings):
    settings.RETENTION_BATCH_ROWS = 2
    now = clock.now()

    def notification(age: timedelta) -> int:
        return IdentityNotification.objects.create(
            digest=uuid.uuid4().hex * 2,
            kind="applicantReviewed",
            created_at=now - age,
            received_at=now - age,
        ).pk

    gone = [notification(timedelta(days=2, minutes=n + 1)) for n in range(3)]
    kept = [notification(timedelta(days=1))]

    assert verification_notifications_prune(now=now) == 3
    assert remaining(IdentityNotification, gone + kept) == set(kept)


def test_ended_admin_sessions_go_live_ones_stay(settings):
    settings.RETENTION_BATCH_ROWS = 2
    now = timezone.now()

    def session(expires: datetime) -> str:
        return Session.objects.create(
            session_key=uuid.uuid4().hex, session_data="", expire_date=expires
        ).pk

    gone = [session(now - timedelta(seconds=n + 1)) for n in range(3)]
    kept = [session(now + DAY)]

    assert purge_sessions.apply().get() == 3
    assert remaining(Session, gone + kept) == set(kept)


@pytest.mark.parametrize(
    ("retention", "index"),
    [(ENDED_EVENTS, "webhook_event_ended"), (FINISHED_TRADE_EVENTS, "trade_event_purgeable")],
)
def test_a_batch_walks_its_partial_index(retention: Retention, index: str):
    """The batch's rows are found along the index that holds only purgeable rows (so rows kept
    for ever are never read again): PostgreSQL can plan it so with sequential scans off."""
    (statement,) = _statements(retention, resumed=False)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {statement}", [clock.now(), 1000])
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert re.search(rf"Index Scan (using|on) {index} ", plan), plan
