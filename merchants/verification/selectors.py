"""Reads of identity verification: a client's status, its processes, the sweep's due list."""

import uuid
from datetime import datetime

from merchants.models import Client, Merchant
from merchants.verification.models import VerificationProcess
from merchants.verification.representations import VerificationStatus

SWEEP_BATCH = 500


def verification_open_process_recent(*, client: Client, since: datetime) -> bool:
    """Whether the client has a process waiting for its verdict that started after ``since``."""
    return VerificationProcess.objects.filter(
        client=client, status=VerificationProcess.Status.PENDING, started_at__gt=since
    ).exists()


def verification_process_get(*, merchant: Merchant, dossier_id: str) -> VerificationProcess | None:
    """A dossier of one of the merchant's clients; another merchant's is not found."""
    return VerificationProcess.objects.filter(merchant=merchant, dossier_id=dossier_id).first()


def verification_status_get(*, client: Client) -> VerificationStatus:
    """The client's level, its latest process and the identity it belongs to. The email is the
    identity's, else the one given at the latest start."""
    latest = (
        VerificationProcess.objects.filter(client=client).order_by("-started_at", "-id").first()
    )
    identity = client.identity
    email = (identity.email if identity else "") or (latest.email if latest else "")
    return VerificationStatus(
        level=client.verification_level,
        email=email or None,
        latest_process=latest,
        identity=identity,
        linked_at=client.identity_linked_at,
    )


def verification_processes_due(*, now: datetime) -> list[uuid.UUID]:
    """Pending processes whose next verdict check is due, oldest deadline first."""
    return list(
        VerificationProcess.objects.filter(
            status=VerificationProcess.Status.PENDING, next_check_at__lte=now
        )
        .order_by("next_check_at")
        .values_list("id", flat=True)[:SWEEP_BATCH]
    )
