import hashlib
import hmac
import ipaddress
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from core import clock
from core.context import request_memo_peek, request_memo_set
from core.db import ModelRows
from merchants.callers import CALLERS
from merchants.models import ApiKey, ApiSecret, Client, Merchant
from merchants.tokens import (
    InvalidClientTokenError,
    client_token_check,
    client_token_claimed_merchant,
)
from merchants.webhooks.models import WebhookEvent


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


_KEY, _SECRETS_OF = "key", "secrets"
_LAST_USED = _KEYS.index("last_used_at")
_KEY_HASH = _KEYS.index("key_hash")
_MERCHANT_ID, _MERCHANT_VERIFIED = _MERCHANTS.index("id"), _MERCHANTS.index("is_verified")


def _key_rows(prefix: str) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """The key with this prefix and its merchant, as converted values."""
    with connection.cursor() as cursor:
        cursor.execute(_KEY_BY_PREFIX, [_KEYS.param("prefix", prefix)])
        row = cursor.fetchone()
    if row is None:
        return None
    return _KEYS.converted(row[: _KEYS.width]), _MERCHANTS.converted(row[_KEYS.width :])


def _key_instance(rows: tuple[tuple[Any, ...], tuple[Any, ...]], raw_key: str) -> ApiKey | None:
    key: ApiKey = _KEYS.instance(rows[0])
    if not hmac.compare_digest(key.key_hash, api_key_hash(raw_key)):
        return None
    key.merchant = _MERCHANTS.instance(rows[1])
    return key


_BUILT_KEY = "merchants.built_key"


def _kept_key_instance(
    rows: tuple[tuple[Any, ...], tuple[Any, ...]], raw_key: str
) -> ApiKey | None:
    """``_key_instance`` of kept rows, built once per request: the guess of who calls
    (``api_key_peek``) and the authentication (``api_key_find``) read the same rows, and building
    a key and its merchant was a tenth of the no-op's CPU when both did."""
    built = request_memo_peek(_BUILT_KEY)
    if built is not None and built[0] is rows and built[1] == raw_key:
        key: ApiKey | None = built[2]
        return key
    key = _key_instance(rows, raw_key)
    request_memo_set(_BUILT_KEY, (rows, raw_key, key))
    return key


def api_key_find(*, raw_key: str) -> ApiKey | None:
    """The key behind a raw key, found by its visible prefix and compared in constant time, with
    its merchant loaded. Every merchant call makes this read: it is written out by hand, and
    kept between requests (``CallerCache``)."""
    prefix = raw_key[: ApiKey.PREFIX_LENGTH]
    serves = CALLERS.serves()
    rows = CALLERS.get(_KEY, prefix) if serves else None
    if rows is None:
        rows = _key_rows(prefix)
        if rows is None:
            return None
        if serves:
            CALLERS.put(_KEY, prefix, rows)
    return _kept_key_instance(rows, raw_key)


def api_key_peek(*, raw_key: str, ip: str) -> tuple[str, bool] | None:
    """The merchant (id, verified) of a key this process keeps, when the kept rows would let it
    call from ``ip``; without any I/O and whatever the epoch: the proven caller a request is
    counted for in the gate's round trip (``merchants.gate``; the gate counts only under the
    epoch the rows were kept under, so a key revoked since is not counted)."""
    rows = CALLERS.guess(_KEY, raw_key[: ApiKey.PREFIX_LENGTH])
    key = None if rows is None else _kept_key_instance(rows, raw_key)
    if key is None or api_key_refusal(key=key, ip=ip, now=clock.real_now()) is not None:
        return None
    return str(rows[1][_MERCHANT_ID]), rows[1][_MERCHANT_VERIFIED]


def api_key_used(*, api_key: ApiKey) -> None:
    """The key's ``last_used_at`` as just recorded, in the kept row too (else, a minute on, every
    request would record it again)."""
    used = api_key.last_used_at

    def change(rows: tuple[tuple[Any, ...], tuple[Any, ...]]) -> Any:
        key = list(rows[0])
        key[_LAST_USED] = used
        return tuple(key), rows[1]

    CALLERS.set_in(_KEY, api_key.prefix, change)


def _secret_rows(merchant_id: str, now: datetime) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    with connection.cursor() as cursor:
        cursor.execute(
            _VERIFYING_SECRETS,
            [_SECRETS.param("merchant", merchant_id), _SECRETS.param("expires_at", now)],
        )
        rows = cursor.fetchall()
    return [
        (_SECRETS.converted(row[: _SECRETS.width]), _MERCHANTS.converted(row[_SECRETS.width :]))
        for row in rows
    ]


def _live_secret_rows(
    merchant_id: str, now: datetime
) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """The merchant's secrets that still verify at ``now`` (real time), newest first, from the
    kept rows when they serve (rows read earlier still hold every secret live now: real time
    only moves on)."""
    serves = CALLERS.serves()
    rows = CALLERS.get(_SECRETS_OF, merchant_id) if serves else None
    if rows is None:
        rows = _secret_rows(merchant_id, now)
        if serves:
            CALLERS.put(_SECRETS_OF, merchant_id, rows)
    return [r for r in rows if r[0][_EXPIRES_AT] is None or r[0][_EXPIRES_AT] > now]


_EXPIRES_AT, _SECRET = _SECRETS.index("expires_at"), _SECRETS.index("secret")


def client_token_peek(*, token: str) -> tuple[str, bool] | None:
    """The merchant (id, verified) of a client token signed by one of the merchant's secrets
    this process keeps and valid now (real time, as the authentication checks it); without any
    I/O and whatever the epoch (see ``api_key_peek``). A token that has not proven who sends it
    is never counted against the merchant it names."""
    merchant_id = client_token_claimed_merchant(token)
    rows = CALLERS.guess(_SECRETS_OF, merchant_id) if merchant_id else None
    if not rows:
        return None
    now = clock.real_now()
    live = [r for r in rows if r[0][_EXPIRES_AT] is None or r[0][_EXPIRES_AT] > now]
    try:
        client_token_check(token, secrets=[r[0][_SECRET] for r in live], now=now)
    except InvalidClientTokenError:
        return None
    return str(rows[0][1][_MERCHANT_ID]), rows[0][1][_MERCHANT_VERIFIED]


def ip_allowed(address: str, whitelist: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(cidr, strict=False) for cidr in whitelist)


def api_key_refusal(*, key: ApiKey | None, ip: str, now: datetime) -> str | None:
    """Why a key may not be used from this address at ``now`` (its error code), or None:
    unknown, revoked or past the end a rotation gave it, its merchant disabled, the address
    outside the key's allow-list. Scopes are the caller's to check. The HTTP API and the feed
    both decide with this."""
    if key is None or key.is_revoked or key.has_expired(now):
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
    if CALLERS.serves():
        for secret, _ in _live_secret_rows(str(merchant.pk), clock.real_now()):
            if secret[_EXPIRES_AT] is None:
                return _SECRETS.instance(secret)
        return None
    with connection.cursor() as cursor:
        cursor.execute(_SIGNING_SECRET, [_SECRETS.param("merchant", merchant.pk)])
        row = cursor.fetchone()
    return None if row is None else _SECRETS.build(row)


def api_secrets_for_verification(
    *, merchant_id: str, now: datetime
) -> tuple[list[str], Merchant | None]:
    """The secrets that still verify tokens, newest first, and their merchant (None: no secret
    verifies). Every client call makes this read: it is written out by hand, and kept between
    requests; only the merchant is built into an instance (a verification reads nothing of a
    secret but its value)."""
    rows = _live_secret_rows(merchant_id, now)
    if not rows:
        return [], None
    merchant: Merchant = _MERCHANTS.instance(rows[0][1])
    return [secret[_SECRET] for secret, _ in rows], merchant


# Merchants whose webhooks need a person (the console's home and the merchants' list filter).
def merchants_webhooks_retrying() -> QuerySet[Merchant]:
    """Merchants with events being retried now: a delivery failed and the event waits for its
    next attempt (pending events are few: the partial index ``webhook_event_due`` holds them)."""
    retrying = WebhookEvent.objects.filter(
        status=WebhookEvent.Status.PENDING, attempts__gte=1
    ).values("merchant_id")
    return Merchant.objects.filter(id__in=retrying)


def merchants_webhooks_failed(*, since: datetime) -> QuerySet[Merchant]:
    """Merchants with events given up on (every retry failed) since ``since``: an index-only
    range of ``webhook_event_failed``."""
    failed = WebhookEvent.objects.filter(
        status=WebhookEvent.Status.FAILED, created_at__gte=since
    ).values("merchant_id")
    return Merchant.objects.filter(id__in=failed)


def merchants_callbacks_disabled() -> QuerySet[Merchant]:
    """Merchants whose callback URL answered 410 Gone: nothing is sent until a URL is set."""
    return Merchant.objects.filter(callback_disabled_at__isnull=False)
