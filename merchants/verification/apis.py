"""End-user identity verification (decisions section 6)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import DomainError
from merchants.models import Client
from merchants.selectors import client_get
from merchants.verification.representations import (
    VerificationStartOut,
    VerificationStatusOut,
    verification_start_json,
    verification_status_json,
)
from merchants.verification.selectors import verification_status_get
from merchants.verification.serializers import (
    VerificationLinkIn,
    VerificationStartIn,
)
from merchants.verification.services import (
    verification_link,
    verification_start,
)
from merchants.views import ClientApiView


class ClientVerificationApiView(ClientApiView):
    def client(self, request: Request) -> Client:
        """The token's client row; a token whose client no longer exists is not valid."""
        caller = self.caller(request)
        client = client_get(merchant=caller.merchant, platform_id=caller.platform_id)
        if client is None:
            raise DomainError("INVALID_TOKEN")
        return client


class VerificationStartApi(ClientVerificationApiView):
    operation = "client.verification"
    body_serializer = VerificationStartIn
    errors = (
        "VERIFICATION_ALREADY_VERIFIED",
        "VERIFICATION_IN_PROGRESS",
        "VERIFICATION_NOT_AVAILABLE",
    )

    @extend_schema(
        operation_id="startClientVerification",
        tags=["verification"],
        responses=VerificationStartOut,
        summary="Open a document-and-selfie check; send the person to captureUrl.",
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        process = verification_start(client=self.client(request), email=body.get("email"))
        return Response(verification_start_json(process))


class VerificationStatusApi(ClientVerificationApiView):
    operation = "client.verification.status"

    @extend_schema(
        operation_id="getClientVerificationStatus",
        tags=["verification"],
        responses=VerificationStatusOut,
    )
    def get(self, request: Request) -> Response:
        status = verification_status_get(client=self.client(request))
        return Response(verification_status_json(status))


class VerificationLinkApi(ClientVerificationApiView):
    operation = "client.verification"
    body_serializer = VerificationLinkIn
    errors = ("VERIFICATION_ALREADY_VERIFIED", "VERIFICATION_LINK_DENIED")

    @extend_schema(
        operation_id="linkClientVerification",
        tags=["verification"],
        responses=VerificationStatusOut,
        summary="Link this account to the merchant's verified identity with this email.",
        description=(
            "Links only when the merchant's latest clientData.kycHash of this account is "
            "present and equal to that of an account already linked to the identity (403 "
            "VERIFICATION_LINK_DENIED otherwise, also when no verified identity has this email, "
            "so the answer never tells which emails are verified): the email alone proves "
            "nothing."
        ),
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        client = verification_link(client=self.client(request), email=body["email"])
        return Response(verification_status_json(verification_status_get(client=client)))
