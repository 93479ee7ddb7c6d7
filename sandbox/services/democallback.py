"""The sandbox's demo merchant receiver: what a merchant's webhook endpoint should do."""

import uuid
from collections.abc import Mapping

import orjson
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from core import clock
from merchants.models import Merchant
from sandbox.models import SandboxReceivedWebhook

KEEP = 200


def demo_callback_receive(*, merchant_id: str, body: bytes, headers: Mapping[str, str]) -> bool:
    """Verify and keep one delivery; every withdrawal approval gets a plain 2xx (approve)."""
    try:
        merchant = Merchant.objects.get(pk=uuid.UUID(merchant_id))
    except (ValueError, Merchant.DoesNotExist):
        return False
    try:
        payload = Webhook(merchant.webhook_secret).verify(body, dict(headers))
    except WebhookVerificationError:
        return False
    SandboxReceivedWebhook.objects.create(
        merchant=merchant,
        webhook_id=headers.get("webhook-id", ""),
        type=str(payload.get("type", "")) if isinstance(payload, dict) else "",
        payload=payload if isinstance(payload, dict) else {"body": orjson.loads(body)},
        signature_valid=True,
        received_at=clock.now(),
    )
    return True


def demo_callback_received(*, merchant: Merchant) -> list[SandboxReceivedWebhook]:
    return list(
        SandboxReceivedWebhook.objects.filter(merchant=merchant).order_by("-received_at")[:KEEP]
    )
