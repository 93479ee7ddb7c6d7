from django.urls import path

from merchants.verification.apis import (
    IdentityProviderNotificationApi,
    VerificationLinkApi,
    VerificationStartApi,
    VerificationStatusApi,
)

urlpatterns = [
    path("client/verification/start", VerificationStartApi.as_view()),
    path("client/verification/status", VerificationStatusApi.as_view()),
    path("client/verification/link", VerificationLinkApi.as_view()),
    path("verification/provider-notifications", IdentityProviderNotificationApi.as_view()),
]
