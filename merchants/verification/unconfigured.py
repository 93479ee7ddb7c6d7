"""The identity provider when none is configured (``IDENTITY_PROVIDER`` unset outside the
sandbox): every call raises ProviderUnavailableError, so the API answers
``VERIFICATION_NOT_AVAILABLE`` instead of pretending; ``manage.py check`` warns about it."""

from collections.abc import Mapping

from merchants.verification.base import (
    Dossier,
    Notification,
    NotificationsUnsupportedError,
    ProviderUnavailableError,
    Verdict,
)

UNCONFIGURED = "No identity provider is configured (IDENTITY_PROVIDER)."


class UnconfiguredIdentityProvider:
    def start(self, *, tenant: str, reference: str, email: str) -> Dossier:
        raise ProviderUnavailableError(UNCONFIGURED)

    def verdict(self, *, tenant: str, dossier_id: str) -> Verdict:
        raise ProviderUnavailableError(UNCONFIGURED)

    def notification_read(self, *, body: bytes, headers: Mapping[str, str]) -> Notification:
        raise NotificationsUnsupportedError(UNCONFIGURED)
