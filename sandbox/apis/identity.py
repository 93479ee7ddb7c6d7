"""The ``/sandbox/verification`` helpers: a dossier's verdict, the provider's outage."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from merchants.ratelimits import SECURE_TRADE, Limited
from merchants.verification.base import Verdict
from merchants.verification.representations import (
    VerificationProcessOut,
    verification_process_json,
)
from merchants.views import MerchantApiView
from sandbox import examples
from sandbox.representations import SandboxIdentityProviderOut
from sandbox.serializers import SandboxIdentityProviderIn, SandboxVerificationDecideIn
from sandbox.services.identity import sandbox_identity_provider_set, sandbox_verification_decide


class SandboxVerificationDecideApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxVerificationDecideIn
    errors = ("NOT_FOUND", "INVALID_TRANSITION")
    doc = OperationDoc(
        summary="Decide an identity check (the provider's verdict)",
        description="""
            Plays the identity provider deciding a check started with
            `POST /client/verification/start` (its `dossierId`): `ACCEPTED` verifies the client
            (level 3), `REJECTED` ends the check and the client may start again. The service
            fetches the verdict as from the real provider and answers the check as it now
            stands. A check already decided, or closed (expired by a newer start), answers
            `INVALID_TRANSITION`; another merchant's dossier or an unknown id `NOT_FOUND`.
        """,
        parameters={"dossierId": examples.VERDICT["dossierId"]},
        request=examples.VERDICT_REQUEST,
        response=examples.VERDICT,
    )

    @extend_schema(
        operation_id="sandboxVerificationVerdict",
        tags=["sandbox"],
        responses=VerificationProcessOut,
        parameters=[
            OpenApiParameter(
                "dossierId", str, OpenApiParameter.PATH, description="from the start's answer"
            )
        ],
    )
    def post(self, request: Request, dossierId: str) -> Response:  # noqa: N803 (the contract's name)
        body = self.parse_body(request)
        process = sandbox_verification_decide(
            merchant=self.merchant(request), dossier_id=dossierId, verdict=Verdict(body["status"])
        )
        return Response(verification_process_json(process))


class SandboxIdentityProviderApi(MerchantApiView):
    rate_limit = Limited("sandbox", SECURE_TRADE)
    body_serializer = SandboxIdentityProviderIn
    doc = OperationDoc(
        summary="Take the identity provider offline or back online",
        description="""
            `offline`: your clients' verification starts answer `VERIFICATION_NOT_AVAILABLE`
            and verdicts decided meanwhile wait, pending, until the provider is back. `online`
            restores it. Only your clients are affected.
        """,
        request=examples.PROVIDER_REQUEST,
        response=examples.PROVIDER,
    )

    @extend_schema(
        operation_id="sandboxSetIdentityProvider",
        tags=["sandbox"],
        responses=SandboxIdentityProviderOut,
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        sandbox_identity_provider_set(
            merchant=self.merchant(request), online=body["status"] == "online"
        )
        answer: SandboxIdentityProviderOut = {"status": body["status"]}
        return Response(answer)
