"""The ``/sandbox/verification`` helpers: a dossier's verdict, the provider's outage."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from config.api.serializers import parse
from merchants.verification.base import Verdict
from merchants.verification.representations import (
    VerificationProcessOut,
    verification_process_json,
)
from merchants.views import MerchantApiView
from sandbox.representations import SandboxIdentityProviderOut
from sandbox.serializers import SandboxIdentityProviderIn, SandboxVerificationDecideIn
from sandbox.services.identity import sandbox_identity_provider_set, sandbox_verification_decide


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
        answer: SandboxIdentityProviderOut = {"status": body["status"]}
        return Response(answer)
