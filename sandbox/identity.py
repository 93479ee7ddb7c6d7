"""The sandbox identity provider: dossiers kept in the service's database, decided by the
``/sandbox/verification/{dossierId}`` helper (or by the autopilot), and an outage switch per
merchant (the ``tenant``). It pushes no notifications: its verdicts reach the service through
the helper and the verdict sweep."""

import secrets
from collections.abc import Mapping
from datetime import timedelta

from django.conf import settings

from core import clock
from merchants.verification.base import (
    Dossier,
    Notification,
    NotificationsUnsupportedError,
    ProviderUnavailableError,
    Verdict,
)
from sandbox.models import SandboxDossier, SandboxIdentityProviderState

# A host that cannot resolve (RFC 2606): the sandbox has no capture page to show.
CAPTURE_URL = "https://capture.idv-sandbox.invalid/session/{session}"
# There is no SDK to open either: the token only stands where a real provider's would.
SDK_TOKEN = "sandbox-sdk-{session}"


def _require_online(tenant: str) -> None:
    online = (
        SandboxIdentityProviderState.objects.filter(merchant_id=tenant)
        .values_list("online", flat=True)
        .first()
    )
    if online is False:
        raise ProviderUnavailableError("the sandbox identity provider is offline")


class SandboxIdentityProvider:
    def start(self, *, tenant: str, reference: str, email: str) -> Dossier:
        _require_online(tenant)
        dossier, _ = SandboxDossier.objects.get_or_create(
            reference=reference,
            defaults={
                "id": f"dsr_{secrets.token_hex(12)}",
                "session": secrets.token_urlsafe(24),
                "email": email,
                "created_at": clock.now(),
            },
        )
        return Dossier(
            dossier_id=dossier.id,
            capture_url=CAPTURE_URL.format(session=dossier.session),
            sdk_token=SDK_TOKEN.format(session=dossier.session),
        )

    def verdict(self, *, tenant: str, dossier_id: str) -> Verdict:
        _require_online(tenant)
        dossier = SandboxDossier.objects.filter(pk=dossier_id).first()
        if dossier is None:
            raise ProviderUnavailableError(f"unknown dossier {dossier_id}")
        if dossier.verdict == SandboxDossier.Verdict.PENDING and _autopilot_due(dossier):
            sandbox_dossier_decide(dossier_id=dossier_id, verdict=Verdict.ACCEPTED)
            dossier.refresh_from_db()
        return Verdict(dossier.verdict)

    def notification_read(self, *, body: bytes, headers: Mapping[str, str]) -> Notification:
        raise NotificationsUnsupportedError("the sandbox identity provider sends no notifications")


def _autopilot_due(dossier: SandboxDossier) -> bool:
    seconds = settings.SANDBOX_AUTOPILOT_SECONDS
    return seconds > 0 and dossier.created_at + timedelta(seconds=seconds) <= clock.now()


def sandbox_dossier_decide(*, dossier_id: str, verdict: Verdict) -> bool:
    """The provider's decision on an undecided dossier; False when there is none to decide."""
    decided = SandboxDossier.objects.filter(
        pk=dossier_id, verdict=SandboxDossier.Verdict.PENDING
    ).update(verdict=verdict, decided_at=clock.now())
    return decided == 1
