"""The service with Sumsub as its identity provider, pointed at a recorded Sumsub on loopback."""

from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from merchants.verification import get_identity_provider
from tests.verification.sumsub.server import FakeSumsub

NOTIFICATIONS = "/verification/provider-notifications"
SUMSUB = "merchants.verification.sumsub.SumsubIdentityProvider"
APP_TOKEN = "sbx:uY0CgwELmgUAEyl4hNWxLngb.0WSeQeiYny4WEqmAALEAiK2qTC96fBad"
SECRET_KEY = "Hej2ch71kG2kTd1iIUDZFNsO5C1lh5Gq"
WEBHOOK_SECRET = "whk-4f1c2a9be77d4c3b"
LEVEL = "id-and-liveness"


def use_sumsub(settings: Any, server: FakeSumsub, **overrides: Any) -> None:
    """Point the service's Sumsub settings at ``server`` (``overrides`` win)."""
    values = {
        "IDENTITY_PROVIDER": SUMSUB,
        "SUMSUB_BASE_URL": server.url,
        "SUMSUB_APP_TOKEN": APP_TOKEN,
        "SUMSUB_SECRET_KEY": SECRET_KEY,
        "SUMSUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "SUMSUB_LEVEL_NAME": LEVEL,
        "SUMSUB_TIMEOUT_SECONDS": 5.0,
    } | overrides
    for name, value in values.items():
        setattr(settings, name, value)
    get_identity_provider.cache_clear()


@pytest.fixture
def sumsub(settings: Any) -> Iterator[FakeSumsub]:
    server = FakeSumsub(
        app_token=APP_TOKEN, secret_key=SECRET_KEY, webhook_secret=WEBHOOK_SECRET, level=LEVEL
    )
    server.start()
    use_sumsub(settings, server)
    yield server
    server.stop()
    get_identity_provider.cache_clear()  # the settings fixture puts the sandbox's back


def notify(api: APIClient, signed: tuple[bytes, dict[str, str]]):
    """Post a webhook to the service as Sumsub does: the raw body, its headers."""
    body, headers = signed
    extra = {k: v for k, v in headers.items() if k != "Content-Type"}
    return api.generic(
        "POST",
        NOTIFICATIONS,
        data=body,
        content_type=headers.get("Content-Type", "application/json"),
        headers=extra,
    )
