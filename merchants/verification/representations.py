"""How verification looks in API responses: each shape once, as a ``TypedDict`` the body
builders return and the OpenAPI document is generated from."""

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal, TypedDict, cast

from core.shapes import Doc, Url, Uuid
from merchants.verification.models import VerificationProcess, VerifiedIdentity

ProcessStatus = Literal["PENDING", "ACCEPTED", "REJECTED", "EXPIRED"]


class VerificationStartOut(TypedDict):
    captureUrl: Annotated[Url, Doc("Send the person here to capture document+selfie.")]
    dossierId: str
    sdkToken: Annotated[
        str,
        Doc(
            "Or open the identity provider's web SDK in your own page with this access token "
            "(Sumsub's WebSDK accessToken); it expires, a new start gives a new one."
        ),
    ]


class VerificationProcessOut(TypedDict):
    dossierId: str
    status: ProcessStatus
    startedAt: datetime
    completedAt: datetime | None


class LinkedIdentityOut(TypedDict):
    identityId: Uuid
    linkedAt: datetime


class VerificationStatusOut(TypedDict):
    verificationLevel: Annotated[
        int, Doc("0: not verified; 3: document and selfie accepted.", minimum=0, maximum=3)
    ]
    email: str | None
    latestProcess: VerificationProcessOut | None
    linkedIdentity: LinkedIdentityOut | None


@dataclass(frozen=True)
class VerificationStarted:
    """A process just opened, with the SDK token the provider gave for it (never stored)."""

    process: VerificationProcess
    sdk_token: str


@dataclass(frozen=True)
class VerificationStatus:
    """A client's verification as the status selector reads it."""

    level: int
    email: str | None
    latest_process: VerificationProcess | None
    identity: VerifiedIdentity | None
    linked_at: datetime | None


def verification_start_json(started: VerificationStarted) -> VerificationStartOut:
    return {
        "captureUrl": started.process.capture_url,
        "dossierId": started.process.dossier_id,
        "sdkToken": started.sdk_token,
    }


def verification_process_json(process: VerificationProcess) -> VerificationProcessOut:
    return {
        "dossierId": process.dossier_id,
        "status": cast(ProcessStatus, process.status),
        "startedAt": process.started_at,
        "completedAt": process.completed_at,
    }


def verification_status_json(status: VerificationStatus) -> VerificationStatusOut:
    return {
        "verificationLevel": status.level,
        "email": status.email,
        "latestProcess": (
            verification_process_json(status.latest_process) if status.latest_process else None
        ),
        "linkedIdentity": (
            {"identityId": str(status.identity.pk), "linkedAt": status.linked_at}
            if status.identity is not None and status.linked_at is not None
            else None
        ),
    }
