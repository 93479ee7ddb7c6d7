"""Delivery of the outbox: each due event claimed with a lease, posted signed outside any
transaction, then one delivery row per attempt and the event's next state (a retry, delivered,
failed, or the approval's outcome handed to its app) recorded together.

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
import random
import uuid
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from core import clock
from core.context import context_request_bound
from core.db import ModelRows, advisory_lock, row_lock
from core.handoffs import handoff_on_commit
from core.logs import LOG_FIELDS
from core.metrics import APPROVAL_CALLBACK_LATENCY, WEBHOOK_ATTEMPTS, count_on_commit
from core.ports import APPROVAL_SUBJECTS
from merchants.callers import callers_changed
from merchants.models import Merchant
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from merchants.webhooks.outbox import WEBHOOK_DELIVERY, Approval
from merchants.webhooks.signing import PostResult, signed_post, storable_text

logger = logging.getLogger(__name__)

# An attempt's deadline: connection, status line, headers and body together (egress).
ATTEMPT_TIMEOUT_SECONDS = 10
# Longer than any attempt can take, with room for a worker that stalls. Leases
# are real time (``clock.real_now``): the sandbox clock moves when an event is due, never when a
# worker's hold on it ends.
LEASE = timedelta(seconds=120)
# Regular events: about 72 hours of retries, each delay with +-10 % jitter.
RETRY_DELAYS = [
    timedelta(seconds=s) for s in (30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, *(21600,) * 11)
]
# Approval callbacks: three attempts in quick succession, then APPROVAL_TIMEOUT.
APPROVAL_ATTEMPTS = 3
APPROVAL_DELAYS = [timedelta(seconds=2), timedelta(seconds=5)]
SWEEP_BATCH = 500
# Times a deferred delivery claims again when it finds room once it has let go (deliveries that
# end meanwhile may have missed it); past them the room keeps being taken, and whoever took it
# hands the event on.
DEFERRAL_RECHECKS = 3
# What an attempt's row keeps of the answer (the column's size).
EXCERPT_CHARS = 500


# What an attempt left its event, for the metrics.
ATTEMPT_OUTCOMES: dict[str, str] = {
    WebhookEvent.Status.DELIVERED: "delivered",
    WebhookEvent.Status.PENDING: "retry",
    WebhookEvent.Status.FAILED: "failed",
}


def _approval_outcome(result: PostResult) -> tuple[str, str] | None:
    """(outcome, reason) when the merchant decided, None for a failed attempt."""
    code = result.status_code
    if code is None or code >= 500 or code in (408, 429):
        return None
    if 200 <= code < 300:
        try:
            answer = orjson.loads(result.body) if result.body else {}
        except orjson.JSONDecodeError:
            answer = {}
        if isinstance(answer, dict) and answer.get("action") == "reject":
            return Approval.REJECTED, storable_text(str(answer.get("reason") or ""), 200)
        return Approval.APPROVED, ""
    if 400 <= code < 500:
        return Approval.REJECTED, f"HTTP {code}"
    return None  # 1xx/3xx: not an answer


def _jittered(delay: timedelta) -> timedelta:
    return delay * random.uniform(0.9, 1.1)  # noqa: S311 (spreading retries, not security)


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
            decided = _approval_outcome(result)
            APPROVAL_CALLBACK_LATENCY.labels(decided[0] if decided else "unanswered").observe(
                result.latency_ms / 1000
            )
    _record_attempt(
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


def _record_attempt(*, event_id: str, lease_until: datetime, url: str, result: PostResult) -> None:
    """Records the attempt and its outcome. One that cannot be recorded (a bug, not a lost
    database: then the lease runs out and the sweep tries again) counts as a failed attempt
    without the answer; if even that fails, the event ends failed. Either way the event is not
    claimed and sent again every lease period for ever."""
    try:
        _record(event_id=event_id, lease_until=lease_until, url=url, result=result)
        return
    except (OperationalError, InterfaceError):
        raise
    except Exception:
        logger.exception("the attempt of webhook event %s could not be recorded", event_id)
    answered = f"the answer (HTTP {result.status_code})" if result.status_code else "the attempt"
    unrecorded = PostResult(
        None, b"", result.latency_ms, f"{answered} could not be recorded; see the logs"
    )
    try:
        _record(event_id=event_id, lease_until=lease_until, url=url, result=unrecorded)
        return
    except (OperationalError, InterfaceError):
        raise
    except Exception:
        logger.exception("webhook event %s could not be settled; it ends failed", event_id)
    _record(event_id=event_id, lease_until=lease_until, url=url, result=unrecorded, give_up=True)


# What settling an attempt changes: only these are read under the lock and written back (the
# payload is neither decoded nor encoded again).
_SETTLED_FIELDS = (
    "status",
    "attempts",
    "next_attempt_at",
    "lease_until",
    "delivered_at",
    "last_error",
)
_SETTLING = ModelRows(
    WebhookEvent,
    only=("id", *_SETTLED_FIELDS, "merchant", "type", "subject_type", "subject_id", "is_approval"),
)
_DELIVERY_COLUMNS = (
    "event",
    "attempt",
    "url",
    "status_code",
    "latency_ms",
    "error",
    "response_excerpt",
    "created_at",
)
_DELIVERIES = ModelRows(WebhookDelivery, only=_DELIVERY_COLUMNS)
# The event row alone (trade_lock says why: an approval goes on to lock its trade), with the
# number of its delivery rows (they number on across a resend, which starts ``attempts`` again).
_SETTLING_LOCKED = (
    f"SELECT {_SETTLING.columns('e')},"  # noqa: S608
    f" (SELECT COUNT(*) FROM {_DELIVERIES.table('d')} WHERE d.event_id = e.id)"
    f" FROM {_SETTLING.table('e')} WHERE e.id = %s"
)
_DELIVERY_INSERT = _DELIVERIES.insert(_DELIVERY_COLUMNS)
_SETTLED_UPDATE = (
    f"UPDATE {_EVENT_TABLE} SET"  # noqa: S608
    f" {', '.join(f'{column} = %s' for column in _SETTLING.quoted(list(_SETTLED_FIELDS)))}"
    " WHERE id = %s"
)


def _settling(event_id: str) -> tuple[WebhookEvent, int] | None:
    """The event's settled fields, locked, and the number of its delivery rows."""
    with connection.cursor() as cursor:
        cursor.execute(_SETTLING_LOCKED + row_lock(), [_SETTLING.param("id", event_id)])
        row = cursor.fetchone()
    if row is None:
        return None
    return _SETTLING.build(row[:-1]), row[-1]


def _record(
    *, event_id: str, lease_until: datetime, url: str, result: PostResult, give_up: bool = False
) -> None:
    """One delivery row and the event's next state; ``give_up`` ends the event failed without
    applying any outcome."""
    now = clock.now()
    with transaction.atomic():
        settling = _settling(event_id)
        if settling is None:
            return
        event, rows = settling
        if event.status != WebhookEvent.Status.PENDING or event.lease_until != lease_until:
            return  # another worker took over after our lease ran out
        event.attempts += 1
        delivery = (
            event.pk,
            rows + 1,
            url,
            result.status_code,
            result.latency_ms,
            result.error,
            storable_text(result.body, EXCERPT_CHARS),
            now,
        )
        with connection.cursor() as cursor:
            cursor.execute(
                _DELIVERY_INSERT,
                _DELIVERIES.params(_DELIVERY_COLUMNS, delivery),
            )
        event.lease_until = None
        event.last_error = result.error or (
            f"HTTP {result.status_code}" if result.status_code else ""
        )
        if give_up:
            _finish(event, WebhookEvent.Status.FAILED, now)
        elif event.is_approval:
            _settle_approval(event, result, now)
        else:
            _settle_regular(event, result, now)
        with connection.cursor() as cursor:
            cursor.execute(
                _SETTLED_UPDATE,
                [_SETTLING.param(name, getattr(event, name)) for name in _SETTLED_FIELDS]
                + [_SETTLING.param("id", event.pk)],
            )
        count_on_commit(
            WEBHOOK_ATTEMPTS,
            1,
            "approval" if event.is_approval else "event",
            ATTEMPT_OUTCOMES[event.status],
        )
    _attempt_log(event, rows + 1, result)


# Every attempt's line, under a logger of its own (docs/ops/logs.md).
attempts_logger = logging.getLogger("webhooks")


def _attempt_log(event: WebhookEvent, number: int, result: PostResult) -> None:
    """The attempt's line, once it is recorded (``webhook trade.pending <event id> attempt 1:
    HTTP 200 in 35 ms, delivered``). The URL is left out (a merchant's may hold a token)."""
    outcome = ATTEMPT_OUTCOMES[event.status]
    answer = f"HTTP {result.status_code}" if result.status_code else result.error or "no answer"
    attempts_logger.log(
        logging.INFO if outcome == "delivered" else logging.WARNING,
        "webhook %s %s attempt %d: %s in %d ms, %s",
        event.type,
        event.pk,
        number,
        answer,
        result.latency_ms,
        outcome,
        extra={
            LOG_FIELDS: {
                "eventId": str(event.pk),
                "eventType": event.type,
                "attempt": number,
                "statusCode": result.status_code,
                "latencyMs": result.latency_ms,
                "outcome": outcome,
            }
        },
    )


def _finish(event: WebhookEvent, status: str, now: datetime) -> None:
    event.status = status
    event.next_attempt_at = None
    if status == WebhookEvent.Status.DELIVERED:
        event.delivered_at = now
        event.last_error = ""


def _disable_callback(event: WebhookEvent, now: datetime) -> None:
    """410 Gone: the merchant retired the URL; nothing is sent until a URL is set again."""
    Merchant.objects.filter(pk=event.merchant_id, callback_disabled_at__isnull=True).update(
        callback_disabled_at=now
    )
    callers_changed()


def _settle_regular(event: WebhookEvent, result: PostResult, now: datetime) -> None:
    code = result.status_code
    if code is not None and 200 <= code < 300:
        _finish(event, WebhookEvent.Status.DELIVERED, now)
    elif code == 410:
        _disable_callback(event, now)
        _finish(event, WebhookEvent.Status.FAILED, now)
    elif event.attempts > len(RETRY_DELAYS):
        _finish(event, WebhookEvent.Status.FAILED, now)
    else:
        event.next_attempt_at = now + _jittered(RETRY_DELAYS[event.attempts - 1])


def _settle_approval(event: WebhookEvent, result: PostResult, now: datetime) -> None:
    decided = _approval_outcome(result)
    if decided is None and event.attempts < APPROVAL_ATTEMPTS:
        event.next_attempt_at = now + APPROVAL_DELAYS[event.attempts - 1]
        return
    outcome, reason = decided or (Approval.TIMED_OUT, event.last_error)
    if result.status_code == 410:
        _disable_callback(event, now)
    _finish(
        event,
        WebhookEvent.Status.DELIVERED if decided else WebhookEvent.Status.FAILED,
        now,
    )
    APPROVAL_SUBJECTS.implementation(event.subject_type).resolve(event.subject_id, outcome, reason)


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
        .values_list("id", flat=True)
        .first()
    )
    if waiting is None:
        return
    # Claims take no lock before their lease is set: one may have taken it meanwhile.
    handed = WebhookEvent.objects.filter(pk=waiting, lease_until__lt=clock.real_now())
    if handed.update(lease_until=None):
        handoff_on_commit(WEBHOOK_DELIVERY, str(waiting))


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
