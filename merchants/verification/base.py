"""The identity verification provider: a document-and-selfie check of one person (a dossier).

The service starts a dossier and sends the person to its capture page; the provider decides
later, and the service fetches the verdict (the sandbox helper and the verdict sweep ask for it).
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class ProviderUnavailableError(Exception):
    """The provider could not answer; the caller may retry later."""


class Verdict(StrEnum):
    PENDING = "PENDING"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"


@dataclass(frozen=True)
class Dossier:
    dossier_id: str
    capture_url: str


class IdentityProvider(Protocol):
    """Every call names its ``tenant``: the id of the merchant it is made for. A real provider
    ignores it; the sandbox provider can be taken offline for one merchant."""

    def start(self, *, tenant: str, reference: str, email: str) -> Dossier:
        """Open a dossier. The same ``reference`` always gives the same dossier, so a retry
        never opens two. Raises ProviderUnavailableError."""

    def verdict(self, *, tenant: str, dossier_id: str) -> Verdict:
        """The dossier's verdict so far. Raises ProviderUnavailableError."""
