"""Standard Webhooks signatures and the one signed POST every webhook and test event is."""

import time
from dataclasses import dataclass
from datetime import UTC, datetime

import requests
from django.utils import timezone
from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook

from core import clock
from merchants.models import Merchant
from merchants.webhooks.egress import callback_post

# What an attempt's row keeps of the error (the column's size).
ERROR_CHARS = 300


def _signatures(merchant: Merchant, msg_id: str, sent_at: datetime, body: str) -> str:
    secrets = [merchant.webhook_secret]
    expires = merchant.previous_webhook_secret_expires_at
    # The old secret's overlap is real time: the sandbox clock never ends it early ("Clocks").
    if merchant.previous_webhook_secret and expires is not None and expires > clock.real_now():
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
