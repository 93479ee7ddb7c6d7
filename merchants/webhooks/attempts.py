"""An attempt's outcome recorded: one delivery row per attempt and the event's next state (a
retry, delivered, failed, or the approval's outcome handed to its app) written together, under
the event's lock. Split from the delivery (``delivery.py``: claims, the merchant's share, the
sweep), which posts the event and hands its answer here."""

import logging
import random
from datetime import datetime, timedelta

import orjson
from django.db import InterfaceError, OperationalError, connection, transaction

from core import clock
from core.db import ModelRows, row_lock
from core.logs import LOG_FIELDS
from core.metrics import WEBHOOK_ATTEMPTS, count_on_commit
from core.ports import APPROVAL_SUBJECTS
from merchants.callers import callers_changed
from merchants.models import Merchant
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from merchants.webhooks.outbox import Approval
from merchants.webhooks.signing import PostResult, storable_text

# The delivery's logger: an attempt that cannot be recorded is part of its story (docs/ops/logs.md).
logger = logging.getLogger("merchants.webhooks.delivery")

# Regular events: about 72 hours of retries, each delay with +-10 % jitter.
RETRY_DELAYS = [
    timedelta(seconds=s) for s in (30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, *(21600,) * 11)
]
# Approval callbacks: three attempts in quick succession, then APPROVAL_TIMEOUT.
APPROVAL_ATTEMPTS = 3
APPROVAL_DELAYS = [timedelta(seconds=2), timedelta(seconds=5)]
# What an attempt's row keeps of the answer (the column's size).
EXCERPT_CHARS = 500


# What an attempt left its event, for the metrics.
ATTEMPT_OUTCOMES: dict[str, str] = {
    WebhookEvent.Status.DELIVERED: "delivered",
    WebhookEvent.Status.PENDING: "retry",
    WebhookEvent.Status.FAILED: "failed",
}


def approval_outcome(result: PostResult) -> tuple[str, str] | None:
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


def attempt_record(*, event_id: str, lease_until: datetime, url: str, result: PostResult) -> None:
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
_EVENT_TABLE = ModelRows(WebhookEvent).table()
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
    decided = approval_outcome(result)
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
