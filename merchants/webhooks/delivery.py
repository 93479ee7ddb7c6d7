"""Webhooks: a transactional outbox, Standard Webhooks signatures, one delivery row per attempt.

Events are written in the transaction of the change they report and delivered after commit; a
periodic sweep re-drives whatever a lost task left. Delivery is at least once: receivers
de-duplicate on ``id`` and order on ``sequence``.
"""

import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import requests
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone
from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook

from core import clock
from core.errors import DomainError
from core.json import dumps, iso_ms
from merchants.callback_http import callback_post
from merchants.models import Merchant, WebhookDelivery, WebhookEvent

logger = logging.getLogger(__name__)

ATTEMPT_TIMEOUT_SECONDS = 10
TEST_TIMEOUT_SECONDS = 8
# Longer than any attempt can take (connect 3 s + read 10 s, with room for a slow drip).
LEASE = timedelta(seconds=120)
# Regular events: about 72 hours of retries, each delay with +-10 % jitter.
RETRY_DELAYS = [
    timedelta(seconds=s) for s in (30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, *(21600,) * 11)
]
# Approval callbacks: three attempts in quick succession, then APPROVAL_TIMEOUT.
APPROVAL_ATTEMPTS = 3
APPROVAL_DELAYS = [timedelta(seconds=2), timedelta(seconds=5)]
SWEEP_BATCH = 500
# What an attempt's row keeps of the answer (the columns' sizes).
ERROR_CHARS = 300
EXCERPT_CHARS = 500


class Approval:
    APPROVED = "approved"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"


# subject_type -> handler(subject_id, outcome, reason), run in the transaction that records the
# merchant's answer. Apps register theirs at start-up.
ApprovalHandler = Callable[[str, str, str], None]
APPROVAL_HANDLERS: dict[str, ApprovalHandler] = {}
_deliver: Callable[[str], None] | None = None


def delivery_scheduler(schedule: Callable[[str], None]) -> None:
    """Tell the outbox how to hand an event id to a worker (the Celery task registers itself)."""
    global _deliver
    _deliver = schedule


def _schedule(event_id: str) -> None:
    if _deliver is not None:
        _deliver(event_id)


def webhook_event_emit(
    *,
    merchant: Merchant,
    type: str,
    subject_type: str,
    subject_id: str,
    sequence: int,
    body_key: str,
    body: Mapping[str, Any],
    is_approval: bool = False,
) -> WebhookEvent:
    """Store an event in the caller's transaction; it is delivered after commit."""
    now = clock.now()
    event_id = uuid.uuid4()
    payload = {
        "id": str(event_id),
        "type": type,
        "createdAt": iso_ms(now),
        "sequence": sequence,
        body_key: orjson.loads(dumps(body)),
    }
    event = WebhookEvent.objects.create(
        id=event_id,
        merchant=merchant,
        type=type,
        subject_type=subject_type,
        subject_id=subject_id,
        sequence=sequence,
        payload=payload,
        is_approval=is_approval,
        created_at=now,
        next_attempt_at=now,
    )
    transaction.on_commit(lambda: _schedule(str(event_id)))
    return event


def _signatures(merchant: Merchant, msg_id: str, sent_at: datetime, body: str) -> str:
    secrets = [merchant.webhook_secret]
    expires = merchant.previous_webhook_secret_expires_at
    if merchant.previous_webhook_secret and expires is not None and expires > clock.now():
        secrets.append(merchant.previous_webhook_secret)
    return " ".join(Webhook(secret).sign(msg_id, sent_at, body) for secret in secrets)


@dataclass(frozen=True)
class PostResult:
    status_code: int | None
    body: bytes
    latency_ms: int
    error: str


def storable_text(raw: bytes | str, limit: int) -> str:
    """Text from outside made fit for a text column: bytes that are not UTF-8, lone surrogates
    and NUL (which PostgreSQL text cannot hold) become U+FFFD; at most ``limit`` characters."""
    if isinstance(raw, bytes):
        text = raw[: limit * 4].decode("utf-8", errors="replace")
    else:
        text = raw[:limit].encode("utf-8", errors="replace").decode("utf-8")
    return text.replace("\x00", "\ufffd")[:limit]


def signed_post(
    *, merchant: Merchant, url: str, msg_id: str, body: bytes, timeout: float
) -> PostResult:
    """One signed POST, never following redirects. Network I/O: call outside transactions."""
    started = time.monotonic()
    text = body.decode()
    sent_at = timezone.now().astimezone(UTC)  # real time: receivers check it against theirs
    try:
        # A secret that cannot sign (not base64) is a failed attempt, recorded like any other,
        # not a crash that would leave the claimed event to be retried without a trace.
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "trading-service-webhooks/1",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(sent_at.timestamp())),
            "webhook-signature": _signatures(merchant, msg_id, sent_at, text),
        }
        answer = callback_post(url, body=body, headers=headers, timeout=timeout)
    except (requests.RequestException, ValueError, OSError, EmptyWebhookSecretError) as exc:
        error = storable_text(str(exc), ERROR_CHARS)
        return PostResult(None, b"", int((time.monotonic() - started) * 1000), error)
    return PostResult(answer.status_code, answer.body, int((time.monotonic() - started) * 1000), "")


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


def webhook_event_deliver(*, event_id: str) -> None:
    """Deliver one due event once. Safe to run twice: the lease and the status guard the row."""
    now = clock.now()
    lease_until = now + LEASE
    claimed = (
        WebhookEvent.objects.filter(
            pk=event_id, status=WebhookEvent.Status.PENDING, next_attempt_at__lte=now
        )
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_until=lease_until)
    )
    if not claimed:
        return
    event = WebhookEvent.objects.select_related("merchant").get(pk=event_id)
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
    _record_attempt(
        event_id=event_id, lease_until=lease_until, url=merchant.callback_url, result=result
    )


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


def _record(
    *, event_id: str, lease_until: datetime, url: str, result: PostResult, give_up: bool = False
) -> None:
    """One delivery row and the event's next state; ``give_up`` ends the event failed without
    applying any outcome."""
    now = clock.now()
    with transaction.atomic():
        # The event row alone (trade_lock says why): an approval goes on to lock its trade.
        event = (
            WebhookEvent.objects.select_for_update(of=("self",), no_key=True)
            .select_related("merchant")
            .get(pk=event_id)
        )
        if event.status != WebhookEvent.Status.PENDING or event.lease_until != lease_until:
            return  # another worker took over after our lease ran out
        event.attempts += 1
        WebhookDelivery.objects.create(
            event=event,
            attempt=event.deliveries.count() + 1,
            url=url,
            status_code=result.status_code,
            latency_ms=result.latency_ms,
            error=result.error,
            response_excerpt=storable_text(result.body, EXCERPT_CHARS),
            created_at=now,
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
        event.save()


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
    APPROVAL_HANDLERS[event.subject_type](event.subject_id, outcome, reason)


def webhook_events_due(*, limit: int = SWEEP_BATCH) -> list[str]:
    """Events a worker should try now: due, and not held by a live lease."""
    now = clock.now()
    rows = (
        WebhookEvent.objects.filter(status=WebhookEvent.Status.PENDING, next_attempt_at__lte=now)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:limit]
    )
    return [str(event_id) for event_id in rows]


def webhook_event_resend(*, event: WebhookEvent) -> WebhookEvent:
    """A failed or delivered event goes out again, same id and body, with a fresh retry budget
    (``attempts`` counts this round; delivery rows keep numbering on)."""
    if event.is_approval:
        raise DomainError("INVALID_TRANSITION", "Approval callbacks cannot be re-sent.")
    now = clock.now()
    reopened = (
        WebhookEvent.objects.filter(pk=event.pk)
        .exclude(status=WebhookEvent.Status.PENDING)
        .update(
            status=WebhookEvent.Status.PENDING,
            attempts=0,
            next_attempt_at=now,
            lease_until=None,
            delivered_at=None,
            last_error="",
        )
    )
    if not reopened:
        raise DomainError("INVALID_TRANSITION", "The event is still being delivered.")
    transaction.on_commit(lambda: _schedule(str(event.pk)))
    event.refresh_from_db()
    return event


def callback_url_test(*, merchant: Merchant, url: str) -> None:
    """A signed ``{"test": true}`` the URL must answer with a 2xx within 8 seconds."""
    test_id = f"test_{uuid.uuid4().hex}"
    result = signed_post(
        merchant=merchant,
        url=url,
        msg_id=test_id,
        body=orjson.dumps({"test": True}),
        timeout=TEST_TIMEOUT_SECONDS,
    )
    if result.status_code is None or not 200 <= result.status_code < 300:
        raise DomainError(
            "CALLBACK_URL_TEST_FAILED",
            f"The test event got {result.status_code or result.error}.",
        )


def merchant_callback_url_set(*, merchant: Merchant, url: str) -> Merchant:
    """Save a callback URL only once it accepted the signed test event."""
    if url:
        callback_url_test(merchant=merchant, url=url)
    Merchant.objects.filter(pk=merchant.pk).update(
        callback_url=url, callback_disabled_at=None, updated_at=clock.now()
    )
    merchant.refresh_from_db()
    return merchant
