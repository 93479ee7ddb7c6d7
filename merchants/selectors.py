import hashlib
import hmac
import uuid
from datetime import datetime

from django.db.models import Q

from merchants.models import ApiKey, ApiSecret, Client, Merchant, WebhookEvent


def client_get(*, merchant: Merchant, platform_id: str) -> Client | None:
    """The client row an authentication stored for this platform id, if any."""
    return Client.objects.filter(merchant=merchant, platform_id=platform_id).first()


def api_key_hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_find(*, raw_key: str) -> ApiKey | None:
    """The live key behind a raw key, found by its visible prefix and compared in constant time."""
    prefix = raw_key[: ApiKey.PREFIX_LENGTH]
    key = ApiKey.objects.select_related("merchant").filter(prefix=prefix).first()
    if key is None or not hmac.compare_digest(key.key_hash, api_key_hash(raw_key)):
        return None
    return key


def api_secret_for_signing(*, merchant: Merchant) -> ApiSecret | None:
    return (
        ApiSecret.objects.filter(merchant=merchant, expires_at__isnull=True)
        .order_by("-created_at")
        .first()
    )


def api_secrets_for_verification(*, merchant_id: str, now: datetime) -> list[ApiSecret]:
    """Secrets that still verify tokens, newest first, each with its merchant loaded."""
    return list(
        ApiSecret.objects.select_related("merchant")
        .filter(merchant_id=merchant_id)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .order_by("-created_at")
    )


def webhook_events_list(
    *, merchant: Merchant, status: str | None, limit: int
) -> list[WebhookEvent]:
    rows = WebhookEvent.objects.filter(merchant=merchant)
    if status:
        rows = rows.filter(status=status)
    return list(rows.order_by("-created_at")[:limit])


def webhook_event_get(*, merchant: Merchant, event_id: str) -> WebhookEvent | None:
    try:
        return WebhookEvent.objects.filter(merchant=merchant, pk=uuid.UUID(event_id)).first()
    except ValueError:
        return None
