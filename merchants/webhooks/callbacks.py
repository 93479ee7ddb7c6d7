"""A merchant's callback URL: saved only once it accepted a signed test event."""

import uuid

import orjson

from core import clock
from core.errors import DomainError
from merchants.callers import callers_changed
from merchants.models import Merchant
from merchants.webhooks.signing import signed_post

TEST_TIMEOUT_SECONDS = 8


def callback_url_test(*, merchant: Merchant, url: str) -> None:
    """A signed ``{"test": true}`` the URL must answer with a 2xx within 8 seconds."""
    test_id = f"test_{uuid.uuid4().hex}"
    result = signed_post(
        merchant=merchant,
        url=url,
        msg_id=test_id,
        body=orjson.dumps({"test": True}),
        timeout=TEST_TIMEOUT_SECONDS,
    )
    if result.status_code is None or not 200 <= result.status_code < 300:
        raise DomainError(
            "CALLBACK_URL_TEST_FAILED",
            f"The test event got {result.status_code or result.error}.",
        )


def merchant_callback_url_set(*, merchant: Merchant, url: str) -> Merchant:
    """Save a callback URL only once it accepted the signed test event."""
    if url:
        callback_url_test(merchant=merchant, url=url)
    Merchant.objects.filter(pk=merchant.pk).update(
        callback_url=url, callback_disabled_at=None, updated_at=clock.now()
    )
    callers_changed()
    merchant.refresh_from_db()
    return merchant
