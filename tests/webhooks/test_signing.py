"""Every delivery is signed per Standard Webhooks and carries the documented body."""

import base64
import hashlib
import hmac
import time
from datetime import timedelta

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from core import clock
from merchants.models import Merchant
from merchants.webhooks.models import WebhookEvent
from tests.factories import auth_body, trade_url
from tests.webhooks.conftest import (
    approval_event,
    bought,
    shop_actor,
    trade_events,
    webhook_secret,
)
from tests.withdrawals.conftest import make_listing
from tests.withdrawals.receiver import Received

pytestmark = pytest.mark.django_db


def expected_signature(secret: str, received: Received) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, computed without the library."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = (
        f"{received.headers['webhook-id']}.{received.headers['webhook-timestamp']}.".encode()
        + received.body
    )
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def test_every_delivery_verifies_and_sequences_increase_per_trade(
    api, shop, catalog_item, hooks, deliver
):
    first = bought(api, shop, make_listing(catalog_item, "10.00"))
    second = bought(api, shop, make_listing(catalog_item, "10.00"))
    deliver()  # both approvals: 2xx approves, the purchase runs, trade.pending is emitted
    for event, status in (("purchased", "active"), ("accepted", "hold")):
        moved = api.post(
            f"/sandbox/trades/{first}/events", {"event": event}, format="json", headers=shop.headers
        )
        assert moved.status_code == 200, moved.content
        assert moved.json()["data"]["status"] == status
    deliver()  # the two trade.pending events and the first trade's active and hold

    assert len(hooks.received) == 6
    secret = shop.merchant.webhook_secret
    stored = {str(e.id): e for e in WebhookEvent.objects.all()}
    for received in hooks.received:
        body = Webhook(secret).verify(received.body, received.headers)
        assert received.headers["webhook-signature"] == expected_signature(secret, received)
        assert set(body) == {"id", "type", "createdAt", "sequence", "trade"}
        assert received.headers["webhook-id"] == body["id"]
        assert abs(int(received.headers["webhook-timestamp"]) - time.time()) < 60
        assert received.headers["content-type"] == "application/json"
        event = stored[body["id"]]
        assert body == event.payload
        assert body["type"] == event.type
        assert body["trade"]["id"] == event.subject_id
        assert body["createdAt"].endswith("Z")
    with pytest.raises(WebhookVerificationError):
        Webhook(webhook_secret()).verify(hooks.received[0].body, hooks.received[0].headers)

    def sequences(trade_id: str) -> list[tuple[int, str]]:
        got = [r.json for r in hooks.received if r.json["trade"]["id"] == trade_id]
        return sorted((body["sequence"], body["type"]) for body in got)

    assert sequences(first) == [
        (1, "trade.initiated"),
        (2, "trade.pending"),
        (3, "trade.active"),
        (4, "trade.hold"),
    ]
    assert sequences(second) == [(1, "trade.initiated"), (2, "trade.pending")]
    assert [e.sequence for e in trade_events(first)] == [1, 2, 3, 4]


def test_the_webhook_id_is_the_event_id_on_every_retry(
    api, shop, listing, hooks, deliver, advance_to
):
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)
    hooks.answer = lambda _: (503, b"")
    deliver(str(event.id))
    event.refresh_from_db()
    assert event.attempts == 1
    hooks.answer = lambda _: (200, b"{}")
    assert event.next_attempt_at is not None
    advance_to(event.next_attempt_at)
    deliver(str(event.id))

    assert len(hooks.received) == 2
    assert {r.headers["webhook-id"] for r in hooks.received} == {str(event.id)}
    assert hooks.received[0].body == hooks.received[1].body
    for received in hooks.received:
        Webhook(shop.merchant.webhook_secret).verify(received.body, received.headers)


def test_during_rotation_both_secrets_sign_until_the_old_one_expires(
    api, shop, catalog_item, hooks, deliver, time_passes
):
    old = webhook_secret()
    new = shop.merchant.webhook_secret
    Merchant.objects.filter(pk=shop.merchant.pk).update(
        previous_webhook_secret=old,
        previous_webhook_secret_expires_at=clock.real_now() + timedelta(hours=1),
    )
    trade_id = bought(api, shop, make_listing(catalog_item, "10.00"))
    deliver(str(approval_event(trade_id).id))

    (during,) = hooks.received
    signatures = during.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2
    assert all(s.startswith("v1,") for s in signatures)
    assert set(signatures) == {expected_signature(new, during), expected_signature(old, during)}
    Webhook(new).verify(during.body, during.headers)
    Webhook(old).verify(during.body, during.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(webhook_secret()).verify(during.body, during.headers)

    time_passes(2 * 3600)  # the old secret expired
    later = bought(api, shop, make_listing(catalog_item, "10.00"))
    deliver(str(approval_event(later).id))
    after = hooks.received[-1]
    assert after.json["trade"]["id"] == later
    assert after.headers["webhook-signature"] == expected_signature(new, after)
    Webhook(new).verify(after.body, after.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(after.body, after.headers)


def test_another_merchant_moving_the_sandbox_clock_never_ends_the_old_secrets_overlap(
    api, shop, catalog_item, hooks, deliver, real_clock_advance
):
    """Issue 39: the overlap of a rotated webhook secret is real time. Another merchant's
    advance of the shared sandbox clock past it leaves both secrets signing; real time ends it."""
    old = webhook_secret()
    Merchant.objects.filter(pk=shop.merchant.pk).update(
        previous_webhook_secret=old,
        previous_webhook_secret_expires_at=clock.real_now() + timedelta(hours=1),
    )
    other = shop_actor("Other", hooks.url)
    advanced = api.post(
        "/sandbox/clock/advance", {"minutes": 1441}, format="json", headers=other.headers
    )
    assert advanced.status_code == 200, advanced.content

    during = bought(api, shop, make_listing(catalog_item, "10.00"))
    deliver(str(approval_event(during).id))
    Webhook(old).verify(hooks.received[-1].body, hooks.received[-1].headers)

    real_clock_advance(3600 + 1)
    after = bought(api, shop, make_listing(catalog_item, "10.00"))
    deliver(str(approval_event(after).id))
    assert hooks.received[-1].json["trade"]["id"] == after
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(hooks.received[-1].body, hooks.received[-1].headers)


def test_client_withdrawal_approval_names_the_client_source(
    api, db, hooks, catalog_item, listing, deliver
):
    shop = shop_actor("Client shop", hooks.url)
    token = api.post(
        "/auth/authenticate-client", auth_body(7), format="json", headers=shop.headers
    ).json()["data"]["token"]
    response = api.post(
        "/client/trading/withdraw",
        {"items": [{"itemId": listing.id, "price": 10.50}]},
        format="json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.content
    trade_id = response.json()["data"]["id"]
    assert response.json()["data"]["status"] == "initiated"
    deliver(str(approval_event(trade_id).id))

    (initiated,) = hooks.received
    body = Webhook(shop.merchant.webhook_secret).verify(initiated.body, initiated.headers)
    assert body["type"] == "trade.initiated"
    assert body["sequence"] == 1
    assert body["trade"]["source"] == "client"
    assert body["trade"]["status"] == "initiated"
    assert body["trade"]["items"][0]["id"] == listing.id
    assert body["trade"]["clientTradeUrl"] == trade_url(7)  # the client's own trade URL
