"""End-user identity verification (decisions section 6)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.docs import OperationDoc
from core.api.views import ApiView
from core.errors import DomainError
from merchants.models import Client
from merchants.ratelimits import CLIENT_TRADE, CLIENT_TRADES, Limited
from merchants.selectors import client_get
from merchants.verification import examples
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
    verification_notification_receive,
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
    rate_limit = Limited("client.verification", CLIENT_TRADE)
    body_serializer = VerificationStartIn
    errors = (
        "VERIFICATION_ALREADY_VERIFIED",
        "VERIFICATION_IN_PROGRESS",
        "VERIFICATION_NOT_AVAILABLE",
    )

    doc = OperationDoc(
        summary="Start the client's identity verification",
        description="""
            Opens a document-and-selfie check of the client at the identity provider. Send the
            person to `captureUrl` to capture their document and a selfie, or open the
            provider's web SDK in your own page with `sdkToken` (with Sumsub: its WebSDK's
            access token, valid 30 minutes by default); the provider decides later and the
            service takes its verdict by itself (no webhook is sent to you): read
            `GET /client/verification/status` to follow it. `email` (optional) names the
            identity the accepted check is kept under, for linking the person's other accounts.

            An accepted check raises the client's KYC level to 3, whatever `clientData.kycLevel`
            says, for the risk limits of instant deposits. A client already verified answers
            `VERIFICATION_ALREADY_VERIFIED`; a check started less than 30 minutes ago and not
            decided yet `VERIFICATION_IN_PROGRESS` (after 30 minutes a new start replaces it); a
            provider that cannot open one now `VERIFICATION_NOT_AVAILABLE` (retry after
            `Retry-After`). A rejected check can be started again at once.
        """,
        request=examples.START_REQUEST,
        response=examples.STARTED,
    )

    @extend_schema(
        operation_id="startClientVerification",
        tags=["verification"],
        responses=VerificationStartOut,
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        started = verification_start(client=self.client(request), email=body.get("email"))
        return Response(verification_start_json(started))


class VerificationStatusApi(ClientVerificationApiView):
    rate_limit = Limited("client.verification.status", CLIENT_TRADES)
    doc = OperationDoc(
        summary="Get the client's verification status",
        description="""
            Where the client's identity verification stands: `verificationLevel` (0 not
            verified, 3 document and selfie accepted), the latest check (`PENDING`, `ACCEPTED`,
            `REJECTED`, `EXPIRED`, with its times) and the verified identity the account
            belongs to, if any. `email` is the identity's, else the one given at the latest
            start. A read never calls the provider: poll it after a start to see the verdict
            arrive.
        """,
        response=examples.VERIFIED,
    )

    @extend_schema(
        operation_id="getClientVerificationStatus",
        tags=["verification"],
        responses=VerificationStatusOut,
    )
    def get(self, request: Request) -> Response:
        status = verification_status_get(client=self.client(request))
        return Response(verification_status_json(status))


class VerificationLinkApi(ClientVerificationApiView):
    rate_limit = Limited("client.verification", CLIENT_TRADE)
    body_serializer = VerificationLinkIn
    errors = ("VERIFICATION_ALREADY_VERIFIED", "VERIFICATION_LINK_DENIED")

    doc = OperationDoc(
        summary="Link the client to an identity already verified",
        description="""
            Makes this platform account share the verification of the same person's other
            account, without a new document check: it joins your verified identity with this
            `email` and gets its level. It links only when you vouch that both accounts are one
            person: the `clientData.kycHash` you last sent for this account equals the one you
            last sent for an account already linked to the identity. Otherwise, and also when
            no verified identity has this email, the answer is `VERIFICATION_LINK_DENIED` and
            nothing changes: the email alone proves nothing, and the answer never tells which
            emails are verified. Linking again to the same identity changes nothing; an account
            already linked to another identity answers `VERIFICATION_ALREADY_VERIFIED`.
            Answers the status, as `GET /client/verification/status` would.
        """,
        request=examples.LINK_REQUEST,
        response=examples.LINKED,
    )

    @extend_schema(
        operation_id="linkClientVerification",
        tags=["verification"],
        responses=VerificationStatusOut,
    )
    def post(self, request: Request) -> Response:
        body = self.parse_body(request)
        client = verification_link(client=self.client(request), email=body["email"])
        return Response(verification_status_json(verification_status_get(client=client)))


class IdentityProviderNotificationApi(ApiView):
    """The identity provider's notifications (Sumsub's webhooks): no credentials, the body's
    signature is the proof; the raw body is read as received, before any parsing. Not in the
    merchants' OpenAPI document: only the provider calls it."""

    authentication_classes = []
    permission_classes = []
    errors = ("PROVIDER_SIGNATURE_INVALID", "PROVIDER_NOTIFICATION_REPLAYED", "NOT_FOUND")

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        verification_notification_receive(
            body=request.body, headers={k.lower(): v for k, v in request.headers.items()}
        )
        return Response({"received": True})
