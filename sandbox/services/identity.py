"""The ``/sandbox/verification`` helpers: the provider's verdict on a dossier, and its outage
switch. Each acts on the calling merchant's dossiers and clients only."""

from core.db import row_upsert
from core.errors import DomainError
from merchants.models import Merchant
from merchants.verification.base import Verdict
from merchants.verification.models import VerificationProcess
from merchants.verification.selectors import verification_process_get
from merchants.verification.services import verification_process_sync
from sandbox.identity import sandbox_dossier_decide
from sandbox.models import SandboxIdentityProviderState


def sandbox_verification_decide(
    *, merchant: Merchant, dossier_id: str, verdict: Verdict
) -> VerificationProcess:
    """The sandbox provider decides one of the merchant's dossiers; the service then fetches
    the verdict as it would from the real provider."""
    process = verification_process_get(merchant=merchant, dossier_id=dossier_id)
    if process is None:
        raise DomainError("NOT_FOUND", "No verification dossier with this id.")
    if process.status != VerificationProcess.Status.PENDING:
        raise DomainError("INVALID_TRANSITION", f"The process is already {process.status}.")
    if not sandbox_dossier_decide(dossier_id=dossier_id, verdict=verdict):
        raise DomainError("INVALID_TRANSITION", "The provider already decided this dossier.")
    return verification_process_sync(process=process)


def sandbox_identity_provider_set(*, merchant: Merchant, online: bool) -> None:
    """Take the provider down or up for this merchant; every other merchant keeps its own."""
    row_upsert(SandboxIdentityProviderState, keys={"merchant": merchant}, values={"online": online})
