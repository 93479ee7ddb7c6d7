"""Sumsub as the identity provider (``IDENTITY_PROVIDER=merchants.verification.sumsub.
SumsubIdentityProvider``): one Sumsub account serves every merchant (``tenant`` is not sent).

A dossier is a Sumsub applicant whose ``externalUserId`` is the process's reference:

1. ``POST /resources/applicants?levelName=`` ``{externalUserId, email?}`` creates it
   (https://docs.sumsub.com/reference/create-applicant); Sumsub answers 409 when an applicant
   with that ``externalUserId`` exists, and the existing one is read instead
   (``GET /resources/applicants/-;externalUserId={id}/one``,
   https://docs.sumsub.com/reference/get-applicant-data-via-externaluserid), so a retried start
   never makes two;
2. ``POST /resources/accessTokens/sdk`` ``{userId, levelName, ttlInSecs}`` gives the WebSDK's
   access token for it, ``{token, userId}`` (https://docs.sumsub.com/reference/generate-access-token;
   the older query-string form ``/resources/accessTokens?userId=`` is not used);
3. ``POST /resources/sdkIntegrations/levels/-/websdkLink`` ``{levelName, userId, ttlInSecs}``
   gives Sumsub's hosted WebSDK page for it, ``{url}``: the capture URL
   (https://docs.sumsub.com/reference/generate-websdk-external-link).

The verdict is read from the applicant's ``review`` (``GET /resources/applicants/{id}/one``) and
from Sumsub's webhooks (``notifications.py``); ``reviews.py`` maps both.
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from django.conf import settings

from merchants.verification.base import (
    Dossier,
    Notification,
    ProviderUnavailableError,
    Verdict,
)
from merchants.verification.sumsub.client import SumsubClient, SumsubUnavailableError
from merchants.verification.sumsub.notifications import notification_parse, notification_verify
from merchants.verification.sumsub.reviews import review_verdict

# What the adapter cannot work without; ``manage.py check`` names the ones unset.
REQUIRED_SETTINGS = (
    "SUMSUB_APP_TOKEN",
    "SUMSUB_SECRET_KEY",
    "SUMSUB_WEBHOOK_SECRET",
    "SUMSUB_LEVEL_NAME",
)


def _field(answer: Any, name: str) -> str:
    value = answer.get(name) if isinstance(answer, dict) else None
    if not isinstance(value, str) or not value:
        raise ProviderUnavailableError(f"Sumsub's answer has no {name}.")
    return value


class SumsubIdentityProvider:
    def __init__(self) -> None:
        self.level_name: str = settings.SUMSUB_LEVEL_NAME
        self.ttl: int = settings.SUMSUB_SDK_TOKEN_TTL_SECONDS
        self.webhook_secret: str = settings.SUMSUB_WEBHOOK_SECRET
        self.client = SumsubClient(
            base_url=settings.SUMSUB_BASE_URL,
            app_token=settings.SUMSUB_APP_TOKEN,
            secret_key=settings.SUMSUB_SECRET_KEY,
            timeout=settings.SUMSUB_TIMEOUT_SECONDS,
        )

    @staticmethod
    def missing_settings() -> list[str]:
        return [name for name in REQUIRED_SETTINGS if not getattr(settings, name)]

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        missing = [name for name in self.missing_settings() if name != "SUMSUB_WEBHOOK_SECRET"]
        if missing:
            raise ProviderUnavailableError(f"Sumsub is not configured: {', '.join(missing)}.")
        try:
            return self.client.call(method, path, **kwargs)
        except SumsubUnavailableError as exc:
            raise ProviderUnavailableError(str(exc)) from exc

    def _applicant_id(self, *, reference: str, email: str) -> str:
        body = {"externalUserId": reference} | ({"email": email} if email else {})
        created = self._call(
            "POST",
            "/resources/applicants",
            params={"levelName": self.level_name},
            body=body,
            expect=(409,),
        )
        if created.status != 409:
            return _field(created.body, "id")
        by_reference = f"/resources/applicants/-;externalUserId={quote(reference, safe='')}/one"
        existing = self._call("GET", by_reference)
        if _field(existing.body, "externalUserId") != reference:
            raise ProviderUnavailableError("Sumsub answered another applicant.")
        return _field(existing.body, "id")

    def start(self, *, tenant: str, reference: str, email: str) -> Dossier:
        applicant_id = self._applicant_id(reference=reference, email=email)
        sdk = {"userId": reference, "levelName": self.level_name, "ttlInSecs": self.ttl}
        token = self._call("POST", "/resources/accessTokens/sdk", body=sdk)
        link = self._call("POST", "/resources/sdkIntegrations/levels/-/websdkLink", body=sdk)
        return Dossier(
            dossier_id=applicant_id,
            capture_url=_field(link.body, "url"),
            sdk_token=_field(token.body, "token"),
        )

    def verdict(self, *, tenant: str, dossier_id: str) -> Verdict:
        applicant = self._call("GET", f"/resources/applicants/{quote(dossier_id, safe='')}/one")
        review = applicant.body.get("review") if isinstance(applicant.body, dict) else None
        if not isinstance(review, dict):
            return Verdict.PENDING
        return review_verdict(
            review_status=review.get("reviewStatus"), review_result=review.get("reviewResult")
        )

    def notification_read(self, *, body: bytes, headers: Mapping[str, str]) -> Notification:
        notification_verify(secret=self.webhook_secret, body=body, headers=headers)
        return notification_parse(body)
