"""Delivery of the outbox: each due event claimed with a lease, posted signed outside any
transaction, then one delivery row per attempt and the event's next state (a retry, delivered,
failed, or the approval's outcome handed to its app) recorded together (``attempts.py``).

A periodic sweep re-drives whatever a lost task left. Delivery is at least once: receivers
de-duplicate on ``id`` and order on ``sequence``. Each attempt is logged (``webhooks`` logger)
under the id of the request that caused the event, and names its merchant, whichever task
delivers it (docs/ops/logs.md).

One merchant's deliveries take a bounded share of the workers: at most
``WEBHOOK_DELIVERIES_PER_MERCHANT`` of them are in flight at once, service-wide (counted in the
database under a lock per merchant, so every worker process keeps to it). A delivery beyond
its merchant's share is deferred: its lease ends as it is taken, so the event stays due and is
known as waiting (a lease that ran out, as a dead worker's). Every delivery that ends hands the
merchant's oldest waiting event on; a deferral that finds room once it has let go (the deliveries
it counted ended before they could see it) claims again; and the sweep hands out every
merchant's oldest due event before any merchant's second, so one merchant's backlog neither
crowds another's out nor is lost.
"""

import logging
import uuid
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from core import clock
from core.context import context_request_bound
from core.db import ModelRows, advisory_lock
from core.handoffs import handoff_on_commit
from core.metrics import APPROVAL_CALLBACK_LATENCY
from core.ports import APPROVAL_SUBJECTS
from merchants.models import Merchant
from merchants.webhooks.attempts import approval_outcome, attempt_record
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import WEBHOOK_DELIVERY
from merchants.webhooks.signing import PostResult, signed_post

logger = logging.getLogger(__name__)

# An attempt's deadline: connection, status line, headers and body together (egress).
ATTEMPT_TIMEOUT_SECONDS = 10
# Longer than any attempt can take, with room for a worker that stalls. Leases
# are real time (``clock.real_now``): the sandbox clock moves when an event is due, never when a
# worker's hold on it ends.
LEASE = timedelta(seconds=120)
SWEEP_BATCH = 500
# Times a deferred delivery claims again when it finds room once it has let go (deliveries that
# end meanwhile may have missed it); past them the room keeps being taken, and whoever took it
# hands the event on.
DEFERRAL_RECHECKS = 3
# Waiting events an ending delivery tries, oldest first, when others took the first meanwhile.
HAND_ON_CANDIDATES = 3


# The statements every delivery makes (two per buy), written out by hand as the per-request
# reads are (``core.db.ModelRows``): the ORM's compiling of them cost more CPU than running them.
# Built from model metadata only; every value goes as a parameter.
_EVENTS = ModelRows(WebhookEvent)
_MERCHANTS = ModelRows(Merchant)
_EVENT_TABLE = _EVENTS.table()
_CLAIM = (
    f"UPDATE {_EVENT_TABLE} SET lease_until = %s"  # noqa: S608
    " WHERE id = %s AND status = %s AND next_attempt_at <= %s"
    " AND (lease_until IS NULL OR lease_until < %s)"
    f" RETURNING {_EVENTS.columns(_EVENT_TABLE)}"
)
_LET_GO = f"UPDATE {_EVENT_TABLE} SET lease_until = %s WHERE id = %s"  # noqa: S608
# The merchant, and how many of its events are leased (this one with them): read under the
# merchant's lock, after the claim, so the count sees every claim committed before.
_MERCHANT_IN_FLIGHT = (
    f"SELECT {_MERCHANTS.columns('m')},"  # noqa: S608
    f" (SELECT COUNT(*) FROM {_EVENTS.table('e')} WHERE e.merchant_id = m.id"
    " AND e.status = %s AND e.lease_until >= %s)"
    f" FROM {_MERCHANTS.table('m')} WHERE m.id = %s"
)


def _share() -> int:
    return max(1, int(settings.WEBHOOK_DELIVERIES_PER_MERCHANT))


def _claimed(
    *, event_id: str, now: datetime, real_now: datetime, lease_until: datetime, share: int
) -> tuple[WebhookEvent, int] | None:
    """The event with its merchant, leased to this worker until ``lease_until``, and the
    number of its merchant's deliveries in flight with it; None when it is not due (by the
    service clock) or a live lease holds it (by real time). A count above the merchant's
    ``share`` ends the lease as it is taken (the event is left waiting)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            _CLAIM,
            [
                _EVENTS.param("lease_until", lease_until),
                _EVENTS.param("id", event_id),
                WebhookEvent.Status.PENDING,
                _EVENTS.param("next_attempt_at", now),
                _EVENTS.param("lease_until", real_now),
            ],
        )
        row = cursor.fetchone()
        if row is None:
            return None
        event: WebhookEvent = _EVENTS.build(row)
        advisory_lock(f"webhooks.deliveries:{event.merchant_id}")
        cursor.execute(
            _MERCHANT_IN_FLIGHT,
            [
                WebhookEvent.Status.PENDING,
                _EVENTS.param("lease_until", real_now),
                _MERCHANTS.param("id", event.merchant_id),
            ],
        )
        merchant = cursor.fetchone()  # the event's foreign key holds it
        event.merchant = _MERCHANTS.build(merchant[:-1])
        in_flight = int(merchant[-1])
        if in_flight > share:
            # Let go at once, so the event reads as waiting to whichever delivery ends next.
            cursor.execute(
                _LET_GO, [_EVENTS.param("lease_until", real_now), _EVENTS.param("id", event_id)]
            )
    return event, in_flight


def webhook_event_deliver(*, event_id: str) -> None:
    """Deliver one due event once, or defer it while its merchant's share of deliveries is in
    flight. Safe to run twice: the lease and the status guard the row."""
    share = _share()
    for attempt in range(DEFERRAL_RECHECKS + 1):
        now, real_now = clock.now(), clock.real_now()
        lease_until = real_now + LEASE
        claim = _claimed(
            event_id=event_id, now=now, real_now=real_now, lease_until=lease_until, share=share
        )
        if claim is None:
            if attempt == 0:
                _approval_resume(event_id=event_id)
            return
        event, in_flight = claim
        if in_flight <= share:
            break
        # Deferred. A delivery counted here may have ended and looked for waiting events
        # before this one was let go: with room now, nobody would hand it on, so claim again.
        if _in_flight(merchant_id=event.merchant_id, real_now=clock.real_now()) >= share:
            return  # handed on when one of the merchant's deliveries ends
    else:
        return  # room taken again each time: those deliveries hand it on when they end
    with context_request_bound(event.request_id, event.merchant_id):
        _deliver(event, lease_until)
    _waiting_hand_on(merchant_id=event.merchant_id)


def _in_flight(*, merchant_id: uuid.UUID, real_now: datetime) -> int:
    return WebhookEvent.objects.filter(
        merchant_id=merchant_id, status=WebhookEvent.Status.PENDING, lease_until__gte=real_now
    ).count()


def _deliver(event: WebhookEvent, lease_until: datetime) -> None:
    event_id = str(event.pk)
    merchant = event.merchant
    if not merchant.has_active_callback:
        result = PostResult(None, b"", 0, "no active callback URL")
    else:
        result = signed_post(
            merchant=merchant,
            url=merchant.callback_url,
            msg_id=str(event.id),
            body=orjson.dumps(event.payload),
            timeout=ATTEMPT_TIMEOUT_SECONDS,
        )
        if event.is_approval:
            decided = approval_outcome(result)
            APPROVAL_CALLBACK_LATENCY.labels(decided[0] if decided else "unanswered").observe(
                result.latency_ms / 1000
            )
    attempt_record(
        event_id=event_id, lease_until=lease_until, url=merchant.callback_url, result=result
    )


def _approval_resume(*, event_id: str) -> None:
    """A delivery run again for an approval already answered: its first run may have died
    after recording the answer, before the work the answer made due was handed on, so that work
    is handed on again rather than left to its sweep."""
    answered = (
        WebhookEvent.objects.filter(
            pk=event_id, is_approval=True, status=WebhookEvent.Status.DELIVERED
        )
        .values_list("subject_type", "subject_id")
        .first()
    )
    if answered is not None:
        subject_type, subject_id = answered
        APPROVAL_SUBJECTS.implementation(subject_type).resume(subject_id)
        # So are the events the answer emitted, which the first run delivers last (after the
        # work it made due) and a run that died left pending.
        for due_id in (
            _due()
            .filter(subject_type=subject_type, subject_id=subject_id, is_approval=False)
            .values_list("id", flat=True)
        ):
            handoff_on_commit(WEBHOOK_DELIVERY, str(due_id))


def _due() -> QuerySet[WebhookEvent]:
    """Pending events due now (by the service clock) and held by no live lease (by real
    time)."""
    return WebhookEvent.objects.filter(
        status=WebhookEvent.Status.PENDING, next_attempt_at__lte=clock.now()
    ).filter(Q(lease_until__isnull=True) | Q(lease_until__lt=clock.real_now()))


def _waiting_hand_on(*, merchant_id: uuid.UUID) -> None:
    """One of the merchant's deliveries ended, so its share has room for one more: the oldest
    of its waiting events (deferred, or left by a dead worker) goes to a worker. Every ending
    hands one on, not only the one that filled the share: otherwise events handed on together
    could all find room and none would hand on the rest. The chosen event's ended lease is
    cleared, so the next delivery that ends hands on the next one. No lock is held: a deferral
    this read misses (not yet let go) sees this delivery's lease gone and claims again."""
    waiting = (
        _due()
        .filter(merchant_id=merchant_id, lease_until__isnull=False)
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:HAND_ON_CANDIDATES]
    )
    for event_id in waiting:
        # Claims and other endings take no lock: one may have taken this one meanwhile.
        handed = WebhookEvent.objects.filter(pk=event_id, lease_until__lt=clock.real_now())
        if handed.update(lease_until=None):
            handoff_on_commit(WEBHOOK_DELIVERY, str(event_id))
            return


def webhook_events_due(*, limit: int = SWEEP_BATCH) -> list[str]:
    """Events a worker should try now: due and not held by a live lease. Each merchant's
    oldest comes first, then each one's second, ...: one merchant's backlog never pushes
    another merchant's events out of a pass, nor ahead of them in the queue."""
    rows = (
        _due()
        .annotate(
            turn=Window(
                RowNumber(), partition_by=[F("merchant_id")], order_by=F("next_attempt_at").asc()
            )
        )
        .order_by("turn", "next_attempt_at")
        .values_list("id", flat=True)[:limit]
    )
    return [str(event_id) for event_id in rows]
