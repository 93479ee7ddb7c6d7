import hashlib
import hmac
import ipaddress
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, Q

from core.db import ModelRows
from merchants.models import ApiKey, ApiSecret, Client, Merchant, WebhookDelivery, WebhookEvent


def api_key_hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


_KEYS = ModelRows(ApiKey)
_SECRETS = ModelRows(ApiSecret)
_MERCHANTS = ModelRows(Merchant)
_CLIENTS = ModelRows(Client)
# Built from model metadata only; every value goes as a parameter.
_KEY_BY_PREFIX = (
    f"SELECT {_KEYS.columns('k')}, {_MERCHANTS.columns('m')}"  # noqa: S608
    f" FROM {_KEYS.table('k')} JOIN {_MERCHANTS.table('m')} ON m.id = k.merchant_id"
    " WHERE k.prefix = %s"
)
_SIGNING_SECRET = (
    f"SELECT {_SECRETS.columns('s')} FROM {_SECRETS.table('s')}"  # noqa: S608
    " WHERE s.merchant_id = %s AND s.expires_at IS NULL ORDER BY s.created_at DESC LIMIT 1"
)
_VERIFYING_SECRETS = (
    f"SELECT {_SECRETS.columns('s')}, {_MERCHANTS.columns('m')}"  # noqa: S608
    f" FROM {_SECRETS.table('s')} JOIN {_MERCHANTS.table('m')} ON m.id = s.merchant_id"
    " WHERE s.merchant_id = %s AND (s.expires_at IS NULL OR s.expires_at > %s)"
    " ORDER BY s.created_at DESC"
)
_CLIENT_BY_PLATFORM_ID = (
    f"SELECT {_CLIENTS.columns('c')} FROM {_CLIENTS.table('c')}"  # noqa: S608
    " WHERE c.merchant_id = %s AND c.platform_id = %s"
)


def client_get(*, merchant: Merchant, platform_id: str) -> Client | None:
    """The client row an authentication stored for this platform id, if any. Client calls make
    this read on every request: it is written out by hand."""
    with connection.cursor() as cursor:
        cursor.execute(
            _CLIENT_BY_PLATFORM_ID,
            [_CLIENTS.param("merchant", merchant.pk), _CLIENTS.param("platform_id", platform_id)],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    client: Client = _CLIENTS.build(row)
    client.merchant = merchant
    return client


def api_key_find(*, raw_key: str) -> ApiKey | None:
    """The live key behind a raw key, found by its visible prefix and compared in constant time,
    with its merchant loaded. Every merchant call makes this read: it is written out by hand."""
    prefix = raw_key[: ApiKey.PREFIX_LENGTH]
    with connection.cursor() as cursor:
        cursor.execute(_KEY_BY_PREFIX, [_KEYS.param("prefix", prefix)])
        row = cursor.fetchone()
    if row is None:
        return None
    key: ApiKey = _KEYS.build(row[: _KEYS.width])
    if not hmac.compare_digest(key.key_hash, api_key_hash(raw_key)):
        return None
    key.merchant = _MERCHANTS.build(row[_KEYS.width :])
    return key


def ip_allowed(address: str, whitelist: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(cidr, strict=False) for cidr in whitelist)


def api_key_refusal(*, key: ApiKey | None, ip: str) -> str | None:
    """Why a key may not be used from this address now (its error code), or None: unknown or
    revoked, its merchant disabled, the address outside the key's allow-list. Scopes are the
    caller's to check. The HTTP API and the feed both decide with this."""
    if key is None or key.is_revoked:
        return "INVALID_API_KEY"
    if not key.merchant.is_active:
        return "ACCOUNT_DISABLED"
    if key.ip_whitelist and not ip_allowed(ip, key.ip_whitelist):
        return "API_KEY_IP_DENIED"
    return None


def api_keys_get(*, ids: Iterable[int]) -> dict[int, ApiKey]:
    """Keys by id with their merchants, revoked ones included (the feed re-checks them)."""
    return ApiKey.objects.select_related("merchant").in_bulk(list(ids))


def api_secret_for_signing(*, merchant: Merchant) -> ApiSecret | None:
    """The newest secret that has no end (rotation gives the old one an end)."""
    with connection.cursor() as cursor:
        cursor.execute(_SIGNING_SECRET, [_SECRETS.param("merchant", merchant.pk)])
        row = cursor.fetchone()
    return None if row is None else _SECRETS.build(row)


def api_secrets_for_verification(*, merchant_id: str, now: datetime) -> list[ApiSecret]:
    """Secrets that still verify tokens, newest first, each with its merchant loaded. Every
    client call makes this read: it is written out by hand."""
    with connection.cursor() as cursor:
        cursor.execute(
            _VERIFYING_SECRETS,
            [_SECRETS.param("merchant", merchant_id), _SECRETS.param("expires_at", now)],
        )
        rows = cursor.fetchall()
    secrets = []
    for row in rows:
        secret: ApiSecret = _SECRETS.build(row[: _SECRETS.width])
        secret.merchant = _MERCHANTS.build(row[_SECRETS.width :])
        secrets.append(secret)
    return secrets


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


@dataclass(frozen=True)
class WebhookHealth:
    """How a merchant's webhooks are doing, for staff: what waits, what was given up, the newest
    delivered event and the newest attempt that did not get a 2xx answer."""

    pending: int
    failed: int
    oldest_pending_at: datetime | None
    last_delivered_at: datetime | None
    last_failure: WebhookDelivery | None


def webhook_health_get(*, merchant: Merchant) -> WebhookHealth:
    events = WebhookEvent.objects.filter(merchant=merchant)
    counts = dict(
        events.filter(status__in=[WebhookEvent.Status.PENDING, WebhookEvent.Status.FAILED])
        .values_list("status")
        .annotate(rows=Count("id"))
        .order_by()
    )
    pending = events.filter(status=WebhookEvent.Status.PENDING).order_by("created_at")
    # The newest delivered event (the (merchant, status, created) index finds it at once).
    delivered = events.filter(status=WebhookEvent.Status.DELIVERED).order_by("-created_at")
    answered = Q(status_code__gte=200, status_code__lt=300)
    failures = WebhookDelivery.objects.filter(event__merchant=merchant).exclude(answered)
    return WebhookHealth(
        pending=counts.get(WebhookEvent.Status.PENDING, 0),
        failed=counts.get(WebhookEvent.Status.FAILED, 0),
        oldest_pending_at=pending.values_list("created_at", flat=True).first(),
        last_delivered_at=delivered.values_list("delivered_at", flat=True).first(),
        last_failure=failures.select_related("event").order_by("-created_at", "-id").first(),
    )
