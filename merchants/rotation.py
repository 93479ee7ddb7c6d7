"""Rotating what a merchant holds without a gap (docs/ops/rotation.md): a new webhook secret
signs beside the old one, and a new API key works beside the old one, for an overlap; then the
old one stops. (Client-token secrets: ``merchants.services.api_secret_rotate``.)"""

import base64
import binascii
from datetime import timedelta

from django.db import transaction

from core import clock
from core.feed import feed_publish_on_commit
from merchants.callers import callers_changed
from merchants.models import ApiKey, Merchant
from merchants.services import api_key_create, webhook_secret_new

# How long the old secret or key keeps working beside its successor unless told otherwise.
ROTATION_OVERLAP = timedelta(hours=24)


def webhook_secret_check(value: str) -> str:
    """A secret given by a merchant (its receiver's): ``whsec_`` and 24 to 64 bytes in base64,
    the Standard Webhooks sizes; ValueError otherwise."""
    try:
        raw = base64.b64decode(value.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("not whsec_ and base64") from exc
    if not value.startswith("whsec_") or not 24 <= len(raw) <= 64:
        raise ValueError("give whsec_ and 24 to 64 bytes in base64")
    return value


def webhook_secret_rotate(
    *, merchant: Merchant, overlap: timedelta = ROTATION_OVERLAP, secret: str = ""
) -> Merchant:
    """A new webhook secret (``secret``, checked, or a new one). The current one keeps signing
    beside it for ``overlap`` (Standard Webhooks: several signatures in ``webhook-signature``),
    so a receiver verifies across the switch; 0 stops it at once (a leaked secret). A secret
    still in an earlier overlap stops now: two at most sign."""
    if overlap < timedelta(0):
        raise ValueError("the overlap cannot be negative")
    new = webhook_secret_check(secret) if secret else webhook_secret_new()
    with transaction.atomic():
        current = Merchant.objects.select_for_update(no_key=True).get(pk=merchant.pk)
        if new == current.webhook_secret:
            raise ValueError("the new secret is the current one")
        current.previous_webhook_secret = current.webhook_secret if overlap else ""
        current.previous_webhook_secret_expires_at = clock.real_now() + overlap if overlap else None
        current.webhook_secret = new
        current.save(
            update_fields=[
                "webhook_secret",
                "previous_webhook_secret",
                "previous_webhook_secret_expires_at",
                "updated_at",
            ]
        )
        callers_changed()
    return current


def api_key_rotate(*, api_key: ApiKey, overlap: timedelta = ROTATION_OVERLAP) -> tuple[ApiKey, str]:
    """A new key like ``api_key`` (merchant, name, scopes, allowed addresses, kind) and its raw
    value; the old key keeps working for ``overlap`` (0: stops now), so the merchant deploys
    the new one without a gap. A key revoked or already ended is not rotated."""
    if overlap < timedelta(0):
        raise ValueError("the overlap cannot be negative")
    now = clock.real_now()
    with transaction.atomic():
        old = ApiKey.objects.select_for_update(no_key=True).get(pk=api_key.pk)
        if old.is_revoked or old.has_expired(now):
            raise ValueError(f"{old.prefix} no longer works: create a new key instead")
        key, raw_key = api_key_create(
            merchant=old.merchant,
            scopes=old.scopes,
            ip_whitelist=old.ip_whitelist,
            is_admin=old.is_admin,
            name=old.name,
        )
        # A key given an earlier end by an earlier rotation keeps it.
        ends = now + overlap
        old.expires_at = ends if old.expires_at is None else min(old.expires_at, ends)
        old.save(update_fields=["expires_at"])
        callers_changed()
    if not overlap:
        feed_publish_on_commit({"kind": "access", "merchantId": str(old.merchant_id)})
    return key, raw_key
