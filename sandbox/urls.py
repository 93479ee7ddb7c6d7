from django.urls import path

from sandbox.apis.clock import SandboxClockAdvanceApi, SandboxClockApi
from sandbox.apis.crypto import (
    SandboxCryptoChainApi,
    SandboxCryptoConfirmationsApi,
    SandboxCryptoReorgApi,
    SandboxCryptoTransfersApi,
)
from sandbox.apis.democallback import SandboxDemoCallbackApi
from sandbox.apis.identity import SandboxIdentityProviderApi, SandboxVerificationDecideApi
from sandbox.apis.platform import SandboxBotsApi, SandboxPlatformUserApi
from sandbox.apis.trades import SandboxTradeEventApi
from sandbox.apis.webhooks import SandboxWebhookTestApi
from sandbox.apis.world import SandboxAutopilotApi, SandboxResetApi

urlpatterns = [
    path("sandbox/verification/<str:dossierId>", SandboxVerificationDecideApi.as_view()),
    path("sandbox/verification-provider", SandboxIdentityProviderApi.as_view()),
    path("sandbox/platform/users", SandboxPlatformUserApi.as_view()),
    path("sandbox/bots", SandboxBotsApi.as_view()),
    path("sandbox/trades/<str:tradeId>/events", SandboxTradeEventApi.as_view()),
    path("sandbox/clock", SandboxClockApi.as_view()),
    path("sandbox/clock/advance", SandboxClockAdvanceApi.as_view()),
    path("sandbox/demo-callback", SandboxDemoCallbackApi.as_view()),
    path("sandbox/webhooks/test", SandboxWebhookTestApi.as_view()),
    path("sandbox/crypto/transfers", SandboxCryptoTransfersApi.as_view()),
    path(
        "sandbox/crypto/transfers/<str:txHash>/confirmations",
        SandboxCryptoConfirmationsApi.as_view(),
    ),
    path("sandbox/crypto/transfers/<str:txHash>/reorg", SandboxCryptoReorgApi.as_view()),
    path("sandbox/crypto/chains/<str:chain>", SandboxCryptoChainApi.as_view()),
    path("sandbox/autopilot", SandboxAutopilotApi.as_view()),
    path("sandbox/reset", SandboxResetApi.as_view()),
]
