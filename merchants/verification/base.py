"""The identity verification provider: a document-and-selfie check of one person (a dossier).

The service starts a dossier and sends the person to its capture page (or opens the provider's
web SDK with the dossier's token); the provider decides later. The verdict reaches the service
two ways: the provider pushes a signed notification (``notification_read``), and the service
asks for it (``verdict``: the sandbox helper and the verdict sweep, which covers a notification
that is late or lost).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol


class ProviderUnavailableError(Exception):
    """The provider could not answer; the caller may retry later."""


class NotificationsUnsupportedError(Exception):
    """This provider pushes no notifications (the sandbox, the unconfigured provider)."""


class NotificationSignatureError(Exception):
    """The notification is not the provider's: its signature is missing or does not verify."""


class NotificationInvalidError(Exception):
    """The notification verifies but cannot be read (not the provider's documented shape)."""


class Verdict(StrEnum):
    PENDING = "PENDING"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"


@dataclass(frozen=True)
class Dossier:
    dossier_id: str
    capture_url: str
    #: Opens the provider's web SDK on this dossier for the person (short-lived).
    sdk_token: str


@dataclass(frozen=True)
class Notification:
    """A message the provider pushed, its signature verified."""

    #: The provider's name of the event (e.g. Sumsub's ``applicantReviewed``).
    kind: str
    #: When the provider made it: outside the service's replay window it is refused.
    created_at: datetime
    #: The dossier it is about, and the ``reference`` it was started with (None: not said).
    dossier_id: str | None
    reference: str | None
    #: What it says of the verdict: None when it says nothing (a step, a reset, another event).
    verdict: Verdict | None


class IdentityProvider(Protocol):
    """Every call names its ``tenant``: the id of the merchant it is made for. A real provider
    ignores it; the sandbox provider can be taken offline for one merchant."""

    def start(self, *, tenant: str, reference: str, email: str) -> Dossier:
        """Open a dossier. The same ``reference`` always gives the same dossier, so a retry
        never opens two (each call may give a new ``sdk_token``). Raises
        ProviderUnavailableError."""

    def verdict(self, *, tenant: str, dossier_id: str) -> Verdict:
        """The dossier's verdict so far. Raises ProviderUnavailableError."""

    def notification_read(self, *, body: bytes, headers: Mapping[str, str]) -> Notification:
        """Verify and read a notification the provider posted (``headers`` with lower-case
        names). Raises NotificationSignatureError, NotificationInvalidError, or
        NotificationsUnsupportedError."""
