import base64
import ipaddress
import math
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from core import clock
from core.db import ModelRows
from core.errors import DomainError
from core.feed import feed_publish_on_commit
from core.json import iso_ms
from core.retention import Retention, rows_purge
from core.services import staff_action_record
from core.staff import Staff
from merchants.callers import callers_changed
from merchants.models import ApiKey, ApiSecret, Client, IdempotentRequest, Merchant, Scope
from merchants.selectors import api_key_hash, api_key_used, api_secret_for_signing
from merchants.tokens import client_token_encode
from merchants.tradeurls import trade_url_platform_id
from merchants.webhooks.callbacks import callback_url_test
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import webhook_event_resend

LAST_USED_RESOLUTION = timedelta(minutes=1)
SECRET_ROTATION_GRACE = timedelta(hours=24)


def webhook_secret_new() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 24 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def merchant_create(
    *,
    name: str,
    is_verified: bool = False,
    callback_url: str = "",
    instant_deposits_enabled: bool = False,
    webhook_secret: str = "",
) -> Merchant:
    """A merchant with its webhook secret (a new one unless given) and a first API secret for
    client tokens. A callback URL must first accept a test event signed with that secret
    (CALLBACK_URL_TEST_FAILED otherwise)."""
    merchant = Merchant(
        name=name,
        is_verified=is_verified,
        instant_deposits_enabled=instant_deposits_enabled,
        webhook_secret=webhook_secret or webhook_secret_new(),
    )
    if callback_url:
        callback_url_test(merchant=merchant, url=callback_url)
        merchant.callback_url = callback_url
    with transaction.atomic():
        merchant.save()
        ApiSecret.objects.create(merchant=merchant, secret=secrets.token_urlsafe(48))
    return merchant


def api_key_create(
    *,
    merchant: Merchant,
    scopes: Sequence[str],
    ip_whitelist: Sequence[str] = (),
    is_admin: bool = False,
    name: str = "",
) -> tuple[ApiKey, str]:
    """A new key and its raw value, which is never stored and cannot be shown again."""
    unknown = set(scopes) - set(Scope.values)
    if unknown:
        raise ValueError(f"unknown scopes: {', '.join(sorted(unknown))}")
    networks = [str(ipaddress.ip_network(cidr, strict=False)) for cidr in ip_whitelist]
    kind = ApiKey.ADMIN_PREFIX if is_admin else ApiKey.MERCHANT_PREFIX
    for _ in range(5):
        prefix = kind + secrets.token_hex((ApiKey.PREFIX_LENGTH - len(kind)) // 2)
        raw_key = f"{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                key = ApiKey.objects.create(
                    merchant=merchant,
                    name=name,
                    is_admin=is_admin,
                    prefix=prefix,
                    key_hash=api_key_hash(raw_key),
                    scopes=sorted(set(scopes)),
                    ip_whitelist=networks,
                )
            return key, raw_key
        except IntegrityError:
            continue  # prefix collision: draw again
    raise RuntimeError("could not draw a unique API key prefix")


def api_key_revoke(*, api_key: ApiKey) -> None:
    """Effective at once: the API refuses the key, and the feed closes its sockets."""
    ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=clock.now())
    callers_changed()
    feed_publish_on_commit({"kind": "access", "merchantId": str(api_key.merchant_id)})


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record last use, at most once a minute per key (compare-and-set, no read-modify-write)."""
    now = clock.now()
    if api_key.last_used_at is not None and now - api_key.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiKey.objects.filter(pk=api_key.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ).update(last_used_at=now)
    api_key.last_used_at = now
    api_key_used(api_key=api_key)


def api_secret_rotate(*, merchant: Merchant, grace: timedelta = SECRET_ROTATION_GRACE) -> ApiSecret:
    """A new signing secret; tokens signed by the old one keep verifying for ``grace`` of real
    time (a credential's lifetime: the sandbox clock moves it neither way, "Clocks")."""
    with transaction.atomic():
        Merchant.objects.select_for_update(no_key=True).get(pk=merchant.pk)
        ApiSecret.objects.filter(merchant=merchant, expires_at__isnull=True).update(
            expires_at=clock.real_now() + grace
        )
        callers_changed()
        return ApiSecret.objects.create(merchant=merchant, secret=secrets.token_urlsafe(48))


def api_secrets_revoke(*, merchant: Merchant) -> int:
    """Stop every secret of a merchant at once; issuing then fails with 1915."""
    now = clock.real_now()
    stopped = (
        ApiSecret.objects.filter(merchant=merchant)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .update(expires_at=now)
    )
    callers_changed()
    return stopped


@dataclass(frozen=True, kw_only=True)
class ClientData:
    total_wager: Decimal = Decimal("0.00")
    kyc_level: int = 0
    fiat_deposits: bool = False
    crypto_deposits: bool = False
    registration_date: datetime | None = None
    kyc_hash: str | None = None

    def as_claims(self) -> dict[str, object]:
        return {
            "totalWager": self.total_wager,
            "kycLevel": self.kyc_level,
            "fiatDeposits": self.fiat_deposits,
            "cryptoDeposits": self.crypto_deposits,
            "registrationDate": (
                iso_ms(self.registration_date) if self.registration_date else None
            ),
            "kycHash": self.kyc_hash,
        }


_CLIENTS = ModelRows(Client)
# Every authentication writes this row: the statement is written out once, not compiled by the
# ORM on each call. Built from model metadata only; every value goes as a parameter.
_CLIENT_REPLACED = [
    "trade_url",
    "client_id",
    "total_wager",
    "kyc_level",
    "fiat_deposits",
    "crypto_deposits",
    "registration_date",
    "kyc_hash",
    "updated_at",
]
_CLIENT_INSERTED = [
    "merchant",
    "platform_id",
    *_CLIENT_REPLACED,
    "verification_level",
    "created_at",
]
_CLIENT_UPSERT = (
    _CLIENTS.insert(_CLIENT_INSERTED)
    + f" ON CONFLICT ({', '.join(_CLIENTS.quoted(['merchant', 'platform_id']))}) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in _CLIENTS.quoted(_CLIENT_REPLACED))
)


def client_authenticate(
    *,
    merchant: Merchant,
    platform_id: str,
    trade_url: str,
    client_id: str | None,
    client_data: ClientData,
) -> str:
    """Store the client's latest data (replacing what was there) and issue its 24-hour token.
    The trade URL must deliver to the account the token names."""
    if trade_url_platform_id(trade_url) != platform_id:
        message = "The trade URL belongs to another platform id."
        raise DomainError("INVALID_TRADEURL", message, fields={"clientTradeUrl": message})
    secret = api_secret_for_signing(merchant=merchant)
    if secret is None:
        raise DomainError("NO_API_SECRET_CONFIGURED")
    now = timezone.now()
    values = {
        "merchant": merchant.pk,
        "platform_id": platform_id,
        "trade_url": trade_url,
        "client_id": client_id or "",
        "total_wager": client_data.total_wager,
        "kyc_level": client_data.kyc_level,
        "fiat_deposits": client_data.fiat_deposits,
        "crypto_deposits": client_data.crypto_deposits,
        "registration_date": client_data.registration_date,
        "kyc_hash": client_data.kyc_hash or "",
        "verification_level": 0,
        "created_at": now,
        "updated_at": now,
    }
    with connection.cursor() as cursor:
        cursor.execute(
            _CLIENT_UPSERT, [_CLIENTS.param(name, values[name]) for name in _CLIENT_INSERTED]
        )
    merchant_id = str(merchant.pk)
    return client_token_encode(
        merchant_id=merchant_id,
        secret=secret.secret,
        client={
            "platformID": platform_id,
            "tradeUrl": trade_url,
            "clientId": client_id,
            "clientData": client_data.as_claims(),
        },
        issued_at=clock.real_now(),  # 24 hours of real time, checked on it ("Clocks")
        ttl=settings.CLIENT_TOKEN_TTL_SECONDS,
    )


# Idempotency keys (docs/decisions.md, "Idempotency-Key"): the first answer to a POST is kept
# this long and replayed to retries; a request holding its key this long without answering is
# taken for dead (its process killed), and a retry may run it again. Both in real time.
IDEMPOTENCY_KEPT = timedelta(hours=24)
IDEMPOTENCY_LEASE = timedelta(seconds=60)


@dataclass(frozen=True)
class IdempotencyClaim:
    """This request holds the key: it runs, then keeps or releases its answer."""

    row_id: int
    claim: uuid.UUID


@dataclass(frozen=True)
class KeptAnswer:
    """The first request's answer, replayed."""

    status_code: int
    body: bytes
    request_id: str


_IDEMPOTENT = ModelRows(IdempotentRequest)
_IDEMPOTENT_TAKEN = [
    "fingerprint",
    "claim",
    "lease_until",
    "request_id",
    "created_at",
    "expires_at",
]
_IDEMPOTENT_INSERTED = ["merchant", "caller", "key", *_IDEMPOTENT_TAKEN]
# One statement claims the key, race-free under parallel retries: a new key is inserted; an
# existing row is taken over only once it expired, or while it still runs the same request past
# its lease (its process died). Otherwise nothing is written and no row returned.
_IDEMPOTENT_CLAIM = (
    _IDEMPOTENT.insert(_IDEMPOTENT_INSERTED)
    + f" ON CONFLICT ({', '.join(_IDEMPOTENT.quoted(['merchant', 'caller', 'key']))})"
    " DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in _IDEMPOTENT.quoted(_IDEMPOTENT_TAKEN))
    + ", status_code = NULL, body = NULL"
    + f" WHERE {_IDEMPOTENT.table()}.expires_at <= %s OR ({_IDEMPOTENT.table()}.status_code IS NULL"
    f" AND {_IDEMPOTENT.table()}.lease_until <= %s"
    f" AND {_IDEMPOTENT.table()}.fingerprint = EXCLUDED.fingerprint)"
    " RETURNING id"
)


def idempotent_request_claim(
    *, merchant: Merchant, caller: str, key: str, fingerprint: str, request_id: str
) -> IdempotencyClaim | KeptAnswer:
    """Claim ``key`` for this request, or find what holds it: the first answer to the same
    request (a ``KeptAnswer`` to replay), ``IDEMPOTENCY_KEY_REUSED`` when it was used for
    another request, ``IDEMPOTENCY_KEY_IN_USE`` while that request still runs. Keys and leases
    live on real time: another merchant moving the sandbox clock never frees a key."""
    now = clock.real_now()
    claim = uuid.uuid4()
    values = {
        "merchant": merchant.pk,
        "caller": caller,
        "key": key,
        "fingerprint": fingerprint,
        "claim": claim,
        "lease_until": now + IDEMPOTENCY_LEASE,
        "request_id": request_id,
        "created_at": now,
        "expires_at": now + IDEMPOTENCY_KEPT,
    }
    params = [_IDEMPOTENT.param(name, values[name]) for name in _IDEMPOTENT_INSERTED]
    at = _IDEMPOTENT.param("expires_at", now)
    # Twice at most: the row that refused the claim may expire and be pruned before it is read.
    for _ in range(2):
        with connection.cursor() as cursor:
            cursor.execute(_IDEMPOTENT_CLAIM, [*params, at, at])
            claimed = cursor.fetchone()
        if claimed is not None:
            return IdempotencyClaim(row_id=int(claimed[0]), claim=claim)
        held = (
            IdempotentRequest.objects.filter(merchant=merchant, caller=caller, key=key)
            .only("fingerprint", "lease_until", "request_id", "status_code", "body")
            .first()
        )
        if held is None:
            continue
        if held.fingerprint != fingerprint:
            raise DomainError("IDEMPOTENCY_KEY_REUSED")
        if held.status_code is None or held.body is None:
            wait = (held.lease_until or now) - now
            raise DomainError(
                "IDEMPOTENCY_KEY_IN_USE", retry_after=max(1, math.ceil(wait.total_seconds()))
            )
        return KeptAnswer(
            status_code=held.status_code, body=bytes(held.body), request_id=held.request_id
        )
    raise DomainError("IDEMPOTENCY_KEY_IN_USE", retry_after=1)


def idempotent_request_answer(*, claim: IdempotencyClaim, status_code: int, body: bytes) -> None:
    """Keep the answer of the request that holds the key (its work is committed by now). A
    request that lost its key meanwhile (it ran past its lease and a retry took it over) keeps
    nothing: the retry's answer is the one replayed."""
    IdempotentRequest.objects.filter(pk=claim.row_id, claim=claim.claim).update(
        status_code=status_code, body=body, lease_until=None
    )


def idempotent_request_release(*, claim: IdempotencyClaim) -> None:
    """Free the key: the request did nothing and may be sent again as it was."""
    IdempotentRequest.objects.filter(pk=claim.row_id, claim=claim.claim).delete()


EXPIRED_KEYS = Retention(model=IdempotentRequest, column="expires_at")


def idempotent_requests_prune(*, now: datetime) -> int:
    """Delete the keys whose answers are no longer kept (in batches: core.retention)."""
    return rows_purge(EXPIRED_KEYS, before=now)


def webhook_event_resend_by_staff(*, event: WebhookEvent, staff: Staff) -> WebhookEvent:
    """Staff send an event again (same id and body, ``webhook_event_resend``), recorded against
    the event's subject, so a trade's page shows who re-sent its webhook and why."""
    with transaction.atomic():
        staff_action_record(
            staff=staff,
            action="resend_webhook",
            subject_type=event.subject_type,
            subject_id=event.subject_id,
            event=str(event.pk),
            type=event.type,
            sequence=event.sequence,
        )
        return webhook_event_resend(event=event)
