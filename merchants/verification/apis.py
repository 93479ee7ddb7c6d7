"""End-user identity verification (decisions section 6) and its sandbox helpers."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from core.errors import DomainError
from merchants.models import Client
from merchants.selectors import client_get
from merchants.verification.base import Verdict
from merchants.verification.representations import (
    VerificationProcessOut,
    VerificationStartOut,
    VerificationStatusOut,
    verification_process_json,
    verification_start_json,
    verification_status_json,
)
from merchants.verification.sandbox import sandbox_identity_provider_set
from merchants.verification.selectors import verification_status_get
from merchants.verification.serializers import (
    SandboxIdentityProviderIn,
    SandboxIdentityProviderOut,
    SandboxVerificationDecideIn,
    VerificationLinkIn,
    VerificationStartIn,
)
from merchants.verification.services import (
    sandbox_verification_decide,
    verification_link,
    verification_start,
)
from merchants.views import ClientApiView, MerchantApiView


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


class SandboxVerificationDecideApi(MerchantApiView):
    operation = "sandbox"
    errors = ("NOT_FOUND", "INVALID_TRANSITION")

    @extend_schema(
        operation_id="sandboxVerificationVerdict",
        tags=["sandbox"],
        request=SandboxVerificationDecideIn,
        responses=VerificationProcessOut,
        parameters=[OpenApiParameter("dossierId", str, OpenApiParameter.PATH)],
    )
    def post(self, request: Request, dossierId: str) -> Response:  # noqa: N803 (the contract's name)
        body = parse(SandboxVerificationDecideIn, request.data)
        process = sandbox_verification_decide(
            merchant=self.merchant(request), dossier_id=dossierId, verdict=Verdict(body["status"])
        )
        return Response(verification_process_json(process))


class SandboxIdentityProviderApi(MerchantApiView):
    operation = "sandbox"

    @extend_schema(
        operation_id="sandboxSetIdentityProvider",
        tags=["sandbox"],
        request=SandboxIdentityProviderIn,
        responses=SandboxIdentityProviderOut,
        summary=(
            "Take the sandbox identity provider offline (3008) or back online, for the "
            "calling merchant's clients only."
        ),
    )
    def post(self, request: Request) -> Response:
        body = parse(SandboxIdentityProviderIn, request.data)
        sandbox_identity_provider_set(
            merchant=self.merchant(request), online=body["status"] == "online"
        )
        return Response({"status": body["status"]})
