"""Sumsub's webhooks, read as the provider's notifications.

Sumsub signs each webhook with the secret key set on it in its webhook manager ("digest
calculation using the HMAC algorithm", SHA256 by default or SHA512:
https://docs.sumsub.com/docs/webhook-manager): ``X-Payload-Digest`` is the hex HMAC of the raw
body and ``X-Payload-Digest-Alg`` names the algorithm, ``HMAC_SHA1_HEX``, ``HMAC_SHA256_HEX`` or
``HMAC_SHA512_HEX`` (the names Sumsub's webhook receivers in public repositories read; the
documentation excerpts at hand did not list them). Only the raw bytes are signed, so the body is
verified before it is parsed; a missing or unknown algorithm is refused.

The payload (https://docs.sumsub.com/docs/user-verification-webhooks, "Payload attributes") has
``type`` (``applicantCreated``, ``applicantPending``, ``applicantReviewed``, ``applicantOnHold``,
``applicantReset``, ...), ``applicantId``, ``externalUserId``, ``correlationId``, ``levelName``,
``reviewStatus``, ``reviewResult`` and ``createdAtMs``, "yyyy-MM-dd HH:mm:ss.fff" in UTC, which
Sumsub says to check to know a webhook is still relevant. Only ``applicantReviewed`` carries a
verdict; the others say nothing of one (a reset applicant waits for new documents: its dossier
stays pending).
"""

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from merchants.verification.base import (
    Notification,
    NotificationInvalidError,
    NotificationSignatureError,
)
from merchants.verification.sumsub.reviews import review_verdict

DIGESTS: dict[str, Callable[[], Any]] = {
    "HMAC_SHA1_HEX": hashlib.sha1,
    "HMAC_SHA256_HEX": hashlib.sha256,
    "HMAC_SHA512_HEX": hashlib.sha512,
}
CREATED_AT_FORMATS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S")
MAX_TEXT = 512  # Sumsub's externalUserId is at most 512 characters; ids are shorter
# What a digest can be: hex. A header is any bytes the sender chose (WSGI gives them as latin-1
# text), and ``hmac.compare_digest`` raises TypeError on text that is not ASCII.
_HEX = re.compile(r"[0-9a-f]+")


def payload_digest(*, secret: str, algorithm: str, body: bytes) -> str:
    """``X-Payload-Digest`` of a body (KeyError: an algorithm Sumsub does not name)."""
    return hmac.new(secret.encode(), body, DIGESTS[algorithm]).hexdigest()


def notification_verify(*, secret: str, body: bytes, headers: Mapping[str, str]) -> None:
    if not secret:
        raise NotificationSignatureError("No webhook secret is configured (SUMSUB_WEBHOOK_SECRET).")
    algorithm = headers.get("x-payload-digest-alg", "")
    digest = headers.get("x-payload-digest", "").strip().lower()
    if algorithm not in DIGESTS:
        raise NotificationSignatureError("X-Payload-Digest-Alg is missing or unknown.")
    expected = payload_digest(secret=secret, algorithm=algorithm, body=body)
    if not _HEX.fullmatch(digest) or not hmac.compare_digest(expected.encode(), digest.encode()):
        raise NotificationSignatureError("X-Payload-Digest does not match the body.")


def _text(payload: dict[str, Any], name: str) -> str:
    value = payload.get(name)
    if not isinstance(value, str) or not value or len(value) > MAX_TEXT:
        raise NotificationInvalidError(f"{name} is not a string of 1-{MAX_TEXT} characters.")
    return value


def _text_or_none(payload: dict[str, Any], name: str) -> str | None:
    return None if payload.get(name) is None else _text(payload, name)


def _created_at(value: str) -> datetime:
    for layout in CREATED_AT_FORMATS:
        try:
            return datetime.strptime(value, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise NotificationInvalidError("createdAtMs is not yyyy-MM-dd HH:mm:ss.fff.")


def notification_parse(body: bytes) -> Notification:
    """A verified body as the service's notification."""
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise NotificationInvalidError("The body is not JSON.") from exc
    if not isinstance(payload, dict):
        raise NotificationInvalidError("The body is not a JSON object.")
    kind = _text(payload, "type")
    created_at = _created_at(_text(payload, "createdAtMs"))
    verdict = None
    if kind == "applicantReviewed":
        verdict = review_verdict(
            review_status=payload.get("reviewStatus", "completed"),
            review_result=payload.get("reviewResult"),
        )
    return Notification(
        kind=kind,
        created_at=created_at,
        dossier_id=_text_or_none(payload, "applicantId"),
        reference=_text_or_none(payload, "externalUserId"),
        verdict=verdict,
    )
