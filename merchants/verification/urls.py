from django.conf import settings
from django.urls import path

from merchants.verification.apis import (
    SandboxIdentityProviderApi,
    SandboxVerificationDecideApi,
    VerificationLinkApi,
    VerificationStartApi,
    VerificationStatusApi,
)

urlpatterns = [
    path("client/verification/start", VerificationStartApi.as_view()),
    path("client/verification/status", VerificationStatusApi.as_view()),
    path("client/verification/link", VerificationLinkApi.as_view()),
]

if settings.SANDBOX:
    urlpatterns += [
        path("sandbox/verification/<str:dossierId>", SandboxVerificationDecideApi.as_view()),
        path("sandbox/verification-provider", SandboxIdentityProviderApi.as_view()),
    ]
