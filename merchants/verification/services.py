"""Identity verification of end users: start a dossier, take its verdict, link accounts.

A client is verified when the provider accepted a dossier of its own, or when it is linked to a
verified identity of the same merchant by that identity's email and the merchant's kycHash (an
account of the identity has the client's kycHash). Either way the client's stored
``verification_level`` rises to the identity's level (``Client.effective_kyc_level`` reads it
without a query); authentication never lowers it.
"""

import hashlib
import logging
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models.functions import Greatest

from core import clock
from core.errors import DomainError, validation_error
from core.retention import Retention, rows_purge
from merchants.models import Client
from merchants.verification import get_identity_provider
from merchants.verification.base import (
    Notification,
    NotificationInvalidError,
    NotificationSignatureError,
    NotificationsUnsupportedError,
    ProviderUnavailableError,
    Verdict,
)
from merchants.verification.models import (
    IdentityNotification,
    VerificationProcess,
    VerifiedIdentity,
)
from merchants.verification.representations import VerificationStarted
from merchants.verification.selectors import verification_open_process_recent

logger = logging.getLogger(__name__)

# Document and selfie checked by the provider: the top of the contract's 0-3 kycLevel scale.
VERIFIED_LEVEL = 3
# A start within this long of the previous one, still without a verdict, is refused.
IN_PROGRESS_WINDOW = timedelta(minutes=30)
FIRST_CHECK_AFTER = timedelta(minutes=1)
MAX_CHECK_INTERVAL = timedelta(hours=1)
# A provider's notification is taken this long after the provider made it, and no longer: the
# service remembers what it took for as long, so a copy is refused as a replay. Sumsub re-sends
# a notification it could not deliver 5 minutes, 1 hour, 5 and 18 hours later
# (https://docs.sumsub.com/docs/webhooks), about 24 hours in all: two days covers it. The
# provider dates a notification by its own clock, real time: the window is real time too, never
# the sandbox clock.
NOTIFICATION_MAX_AGE = timedelta(days=2)
# How far ahead of real time the provider's clock may run.
NOTIFICATION_MAX_SKEW = timedelta(minutes=5)


def email_normalize(email: str | None) -> str:
    """Emails match case-insensitively: kept trimmed and in lower case, "" when not given."""
    return (email or "").strip().lower()


def _check_interval(checks: int) -> timedelta:
    doubled: int = 2 ** min(checks, 10)
    return min(MAX_CHECK_INTERVAL, FIRST_CHECK_AFTER * doubled)


def _start_allowed(*, client: Client, now: datetime) -> None:
    if client.verification_level >= VERIFIED_LEVEL:
        raise DomainError("VERIFICATION_ALREADY_VERIFIED")
    if verification_open_process_recent(client=client, since=now - IN_PROGRESS_WINDOW):
        raise DomainError(
            "VERIFICATION_IN_PROGRESS",
            "A verification started less than 30 minutes ago is still waiting for its verdict.",
        )


def verification_start(*, client: Client, email: str | None) -> VerificationStarted:
    """Open a dossier at the provider and record it as the client's one open process; an open
    process older than 30 minutes is expired and replaced. The provider is called outside any
    transaction; the rules are checked again under the client's row lock afterwards. The SDK
    token goes to the caller and is not stored."""
    _start_allowed(client=client, now=clock.now())
    reference = uuid.uuid4()
    normalized = email_normalize(email)
    try:
        dossier = get_identity_provider().start(
            tenant=str(client.merchant_id), reference=str(reference), email=normalized
        )
    except ProviderUnavailableError as exc:
        raise DomainError("VERIFICATION_NOT_AVAILABLE", retry_after=60) from exc
    with transaction.atomic():
        locked = Client.objects.select_for_update(no_key=True).get(pk=client.pk)
        now = clock.now()
        _start_allowed(client=locked, now=now)
        VerificationProcess.objects.filter(
            client=locked,
            status=VerificationProcess.Status.PENDING,
            started_at__lte=now - IN_PROGRESS_WINDOW,
        ).update(status=VerificationProcess.Status.EXPIRED, completed_at=now, next_check_at=None)
        process = VerificationProcess.objects.create(
            id=reference,
            merchant_id=locked.merchant_id,
            client=locked,
            dossier_id=dossier.dossier_id,
            capture_url=dossier.capture_url,
            email=normalized,
            started_at=now,
            next_check_at=now + FIRST_CHECK_AFTER,
        )
    return VerificationStarted(process=process, sdk_token=dossier.sdk_token)


def _identity_for(*, merchant_id: uuid.UUID, email: str, now: datetime) -> VerifiedIdentity:
    """The identity an accepted dossier proves: the merchant's identity with that email, or a
    new one (always new without an email: nothing else can find it)."""
    if not email:
        return VerifiedIdentity.objects.create(
            merchant_id=merchant_id, level=VERIFIED_LEVEL, verified_at=now
        )
    identity, _ = VerifiedIdentity.objects.get_or_create(
        merchant_id=merchant_id,
        email=email,
        defaults={"level": VERIFIED_LEVEL, "verified_at": now},
    )
    return identity


def _client_link(*, client: Client, identity: VerifiedIdentity, now: datetime) -> None:
    """Bind a locked client row to an identity and raise its stored level to the identity's."""
    Client.objects.filter(pk=client.pk).update(
        identity=identity,
        identity_linked_at=now,
        verification_level=Greatest("verification_level", identity.level),
    )


def verification_verdict_apply(
    *, process: VerificationProcess, verdict: Verdict
) -> VerificationProcess:
    """Close a pending process with the provider's verdict (once: a second call, or a call for
    an expired process, changes nothing). ACCEPTED verifies the client: it joins the identity
    it is already linked to, else the merchant's identity with the dossier's email, else a new
    identity."""
    if verdict == Verdict.PENDING:
        return process
    with transaction.atomic():
        client = Client.objects.select_for_update(no_key=True).get(pk=process.client_id)
        now = clock.now()
        closed = VerificationProcess.objects.filter(
            pk=process.pk, status=VerificationProcess.Status.PENDING
        ).update(status=verdict.value, completed_at=now, next_check_at=None)
        if closed and verdict == Verdict.ACCEPTED:
            identity_id = client.identity_id
            if identity_id is None:
                identity = _identity_for(
                    merchant_id=client.merchant_id, email=process.email, now=now
                )
                _client_link(client=client, identity=identity, now=now)
                identity_id = identity.pk
            VerificationProcess.objects.filter(pk=process.pk).update(identity_id=identity_id)
    process.refresh_from_db()
    return process


def verification_process_sync(*, process: VerificationProcess) -> VerificationProcess:
    """Fetch the dossier's verdict (no transaction is open during the call) and apply it. A
    provider that cannot answer leaves the process pending for the sweep to ask again."""
    try:
        verdict = get_identity_provider().verdict(
            tenant=str(process.merchant_id), dossier_id=process.dossier_id
        )
    except ProviderUnavailableError:
        return process
    return verification_verdict_apply(process=process, verdict=verdict)


def verification_process_claim(*, process: VerificationProcess, now: datetime) -> bool:
    """Move a pending process's next check on, unless another worker did since ``process`` was
    read (compare-and-set on ``checks``): only the winner asks the provider."""
    claimed = VerificationProcess.objects.filter(
        pk=process.pk, status=VerificationProcess.Status.PENDING, checks=process.checks
    ).update(checks=process.checks + 1, next_check_at=now + _check_interval(process.checks + 1))
    return claimed == 1


def verification_process_poll(*, process_id: uuid.UUID | str) -> None:
    """One check of a due pending process by the sweep."""
    process = VerificationProcess.objects.filter(pk=process_id).first()
    now = clock.now()
    if (
        process is None
        or process.status != VerificationProcess.Status.PENDING
        or process.next_check_at is None
        or process.next_check_at > now
    ):
        return
    if verification_process_claim(process=process, now=now):
        verification_process_sync(process=process)


def _notification_read(*, body: bytes, headers: Mapping[str, str]) -> Notification:
    try:
        return get_identity_provider().notification_read(body=body, headers=headers)
    except NotificationsUnsupportedError as exc:
        raise DomainError("NOT_FOUND", "This identity provider sends no notifications.") from exc
    except NotificationSignatureError as exc:
        raise DomainError("PROVIDER_SIGNATURE_INVALID", str(exc)) from exc
    except NotificationInvalidError as exc:
        raise validation_error({"body": str(exc)}) from exc


def verification_notification_receive(
    *, body: bytes, headers: Mapping[str, str]
) -> VerificationProcess | None:
    """Take a notification the provider pushed: its signature verified by the provider's
    adapter, refused when older than the replay window or already taken (the same bytes), then
    its verdict applied to the dossier's process, as the verdict sweep would apply a fetched one.
    Answers the process it was about, or None (an unknown dossier, another event)."""
    notification = _notification_read(body=body, headers=headers)
    now = clock.real_now()
    if notification.created_at < now - NOTIFICATION_MAX_AGE:
        raise DomainError(
            "PROVIDER_NOTIFICATION_REPLAYED",
            "The notification is older than the replay window (2 days).",
        )
    if notification.created_at > now + NOTIFICATION_MAX_SKEW:
        raise validation_error({"body": "The notification was made in the future."})
    with transaction.atomic():
        _, new = IdentityNotification.objects.get_or_create(
            digest=hashlib.sha256(body).hexdigest(),
            defaults={
                "kind": notification.kind[:64],
                "dossier_id": (notification.dossier_id or "")[:128],
                "created_at": notification.created_at,
                "received_at": now,
            },
        )
        if not new:
            raise DomainError("PROVIDER_NOTIFICATION_REPLAYED")
        process = (
            VerificationProcess.objects.filter(dossier_id=notification.dossier_id).first()
            if notification.dossier_id
            else None
        )
        if process is None:
            return None
        if notification.reference is not None and notification.reference != str(process.pk):
            logger.warning(
                "identity notification for dossier %s names reference %s, not process %s",
                process.dossier_id,
                notification.reference,
                process.pk,
            )
            return None
        if notification.verdict is None:
            return process
        return verification_verdict_apply(process=process, verdict=notification.verdict)


REPLAYS_FORGOTTEN = Retention(model=IdentityNotification, column="created_at")


def verification_notifications_prune(*, now: datetime) -> int:
    """Forget notifications older than the replay window: a copy of one is refused by its age."""
    return rows_purge(REPLAYS_FORGOTTEN, before=now - NOTIFICATION_MAX_AGE)


def _same_person(*, client: Client, identity: VerifiedIdentity) -> bool:
    """The merchant says so: the client's latest ``clientData.kycHash`` is present and is the
    latest kycHash of an account that already belongs to the identity. An email alone, which
    anyone holding a client token can type, proves nothing."""
    return bool(client.kyc_hash) and (
        Client.objects.filter(
            merchant_id=client.merchant_id, identity=identity, kyc_hash=client.kyc_hash
        )
        .exclude(pk=client.pk)
        .exists()
    )


def verification_link(*, client: Client, email: str) -> Client:
    """Link the client to the merchant's verified identity with this email, when an account of
    that identity has the client's kycHash. Linking again to the same identity changes nothing; a
    client of another identity is already verified. An unknown email and a kycHash that does not
    match answer alike (VERIFICATION_LINK_DENIED), so the call tells nobody which emails are
    verified."""
    normalized = email_normalize(email)
    identity = (
        VerifiedIdentity.objects.filter(merchant_id=client.merchant_id, email=normalized).first()
        if normalized
        else None
    )
    with transaction.atomic():
        locked = Client.objects.select_for_update(no_key=True).get(pk=client.pk)
        if locked.identity_id is not None and (
            identity is None or locked.identity_id != identity.pk
        ):
            raise DomainError(
                "VERIFICATION_ALREADY_VERIFIED", "This account belongs to another identity."
            )
        if locked.identity_id is None:
            if identity is None or not _same_person(client=locked, identity=identity):
                raise DomainError(
                    "VERIFICATION_LINK_DENIED",
                    "No verified identity of this merchant has this email and this account's "
                    "kycHash.",
                )
            _client_link(client=locked, identity=identity, now=clock.now())
    locked.refresh_from_db()
    return locked
