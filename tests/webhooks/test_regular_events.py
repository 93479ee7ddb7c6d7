"""Regular events (every ``trade.*`` event that is not an approval): 2xx delivers, 410 disables
the URL, anything else is retried with jittered exponential backoff for about 72 hours, then the
event fails and the merchant can list and re-send it."""

from datetime import timedelta
from decimal import Decimal

import pytest
from standardwebhooks.webhooks import Webhook

from core import clock
from core.errors import DomainError
from merchants.models import Merchant
from merchants.webhooks.attempts import RETRY_DELAYS
from merchants.webhooks.callbacks import merchant_callback_url_set
from merchants.webhooks.delivery import webhook_event_deliver, webhook_events_due
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from tests.factories import assert_error, make_actor
from tests.webhooks.conftest import (
    TRADE_URL,
    approval_event,
    bought,
    buy,
    closed_port_url,
    trade_events,
    webhook_secret,
)
from tests.withdrawals.conftest import make_listing
from wallet.selectors import wallet_balances, wallet_invariants_check

pytestmark = pytest.mark.django_db


def approved(api, actor, listing, deliver) -> WebhookEvent:  # type: ignore[no-untyped-def]
    """Buys and approves a listing; returns the trade's ``trade.pending`` event (undelivered)."""
    trade_id = bought(api, actor, listing)
    deliver(str(approval_event(trade_id).id))
    pending = trade_events(trade_id)[-1]
    assert (pending.type, pending.status, pending.is_approval) == (
        "trade.pending",
        "pending",
        False,
    )
    return pending


def test_2xx_delivers(api, shop, listing, hooks, deliver):
    event = approved(api, shop, listing, deliver)
    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts, event.next_attempt_at) == ("delivered", 1, None)
    assert event.delivered_at is not None
    row = WebhookDelivery.objects.get(event=event)
    assert (row.attempt, row.status_code, row.error) == (1, 200, "")
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]
    assert hooks.received[-1].json == event.payload
    assert str(event.id) not in webhook_events_due()


def test_the_retry_schedule_covers_about_72_hours():
    assert len(RETRY_DELAYS) == 20
    total = sum(RETRY_DELAYS, timedelta())
    assert timedelta(hours=66) <= total <= timedelta(hours=78)
    assert sorted(RETRY_DELAYS) == RETRY_DELAYS  # backing off, never speeding up
    assert RETRY_DELAYS[0] <= timedelta(minutes=1)


@pytest.mark.parametrize("outage", ["HTTP 500", "server down"])
def test_failures_are_retried_on_the_jittered_schedule_then_the_event_fails(
    api, shop, listing, hooks, deliver, advance_to, outage
):
    event = approved(api, shop, listing, deliver)
    hooks.answer = lambda _: (500, b"oops")
    if outage == "server down":
        Merchant.objects.filter(pk=shop.merchant.pk).update(callback_url=closed_port_url())

    started = clock.now()
    ratios = []
    for attempt, delay in enumerate(RETRY_DELAYS, start=1):
        before = clock.now()
        deliver(str(event.id))
        after = clock.now()
        event.refresh_from_db()
        assert (event.status, event.attempts) == ("pending", attempt)
        assert event.next_attempt_at is not None
        assert before + delay * 0.9 <= event.next_attempt_at <= after + delay * 1.1
        ratios.append((event.next_attempt_at - before) / delay)
        if attempt in (1, 10):
            deliver(str(event.id))  # before the deadline nothing is sent
            assert WebhookDelivery.objects.filter(event=event).count() == attempt
            assert str(event.id) not in webhook_events_due()
        advance_to(event.next_attempt_at)
        assert str(event.id) in webhook_events_due()
    deliver(str(event.id))  # the last attempt

    event.refresh_from_db()
    assert (event.status, event.attempts, event.next_attempt_at) == ("failed", 21, None)
    elapsed = clock.now() - started
    total = sum(RETRY_DELAYS, timedelta())
    assert total * 0.9 <= elapsed <= total * 1.1 + timedelta(minutes=5)
    assert len({round(r, 4) for r in ratios}) > 1  # jittered, not a fixed schedule
    rows = list(WebhookDelivery.objects.filter(event=event))
    assert [r.attempt for r in rows] == list(range(1, 22))
    if outage == "HTTP 500":
        assert {(r.status_code, r.response_excerpt) for r in rows} == {(500, "oops")}
        assert event.last_error == "HTTP 500"
        assert len(hooks.of_type("trade.pending")) == 21
    else:
        assert {r.status_code for r in rows} == {None}
        assert all(r.error for r in rows)
        assert event.last_error
    deliver(str(event.id))
    assert WebhookDelivery.objects.filter(event=event).count() == 21
    assert str(event.id) not in webhook_events_due()
    assert Merchant.objects.get(pk=shop.merchant.pk).callback_disabled_at is None

    # The merchant finds it among its failed events and re-sends it once the endpoint is back.
    Merchant.objects.filter(pk=shop.merchant.pk).update(callback_url=hooks.url)
    hooks.answer = lambda _: (200, b"{}")
    listed = api.get("/secure/webhooks/events?status=failed", headers=shop.headers)
    assert listed.status_code == 200
    assert [e["id"] for e in listed.json()["data"]["events"]] == [str(event.id)]
    resent = api.post(f"/secure/webhooks/events/{event.id}/resend", headers=shop.headers)
    assert resent.status_code == 200, resent.content
    deliver(str(event.id))
    event.refresh_from_db()
    assert event.status == "delivered"
    last = hooks.received[-1]
    assert last.headers["webhook-id"] == str(event.id)
    assert last.json == event.payload
    Webhook(shop.merchant.webhook_secret).verify(last.body, last.headers)


def test_410_disables_the_callback_url(api, shop, catalog_item, hooks, deliver):
    gone = approved(api, shop, make_listing(catalog_item, "10.00"), deliver)
    waiting = approved(api, shop, make_listing(catalog_item, "10.00"), deliver)
    hooks.answer = lambda _: (410, b"")
    sent_before = len(hooks.received)
    deliver(str(gone.id))

    gone.refresh_from_db()
    assert (gone.status, gone.attempts, gone.last_error) == ("failed", 1, "HTTP 410")
    merchant = Merchant.objects.get(pk=shop.merchant.pk)
    assert merchant.callback_disabled_at is not None
    assert abs(merchant.callback_disabled_at - clock.now()) < timedelta(minutes=1)
    assert merchant.callback_url == hooks.url  # kept, but no longer active
    assert len(hooks.received) == sent_before + 1

    # New withdrawals need an active callback URL.
    refused = buy(api, shop, make_listing(catalog_item, "10.00"))
    assert_error(refused, 400, 1705, "MERCHANT_NO_CALLBACK_URL")
    quick = api.post(
        "/secure/buy/quick",
        {"tradeUrl": TRADE_URL, "itemId": catalog_item.id, "maxPrice": 20, "amount": 1},
        format="json",
        headers=shop.headers,
    )
    assert_error(quick, 400, 1705, "MERCHANT_NO_CALLBACK_URL")
    assert wallet_balances(merchant=shop.merchant)["locked"] == Decimal("21.00")

    # Other events are not sent to a disabled URL; they wait and retry.
    hooks.answer = lambda _: (200, b"{}")
    deliver(str(waiting.id))
    waiting.refresh_from_db()
    assert (waiting.status, waiting.attempts) == ("pending", 1)
    assert WebhookDelivery.objects.get(event=waiting).error == "no active callback URL"
    assert len(hooks.received) == sent_before + 1

    # Saving the URL again (it must accept the signed test event) re-enables it.
    merchant_callback_url_set(merchant=merchant, url=hooks.url)
    test_event = hooks.received[-1]
    assert test_event.json == {"test": True}
    assert test_event.headers["webhook-id"].startswith("test_")
    Webhook(shop.merchant.webhook_secret).verify(test_event.body, test_event.headers)
    assert Merchant.objects.get(pk=shop.merchant.pk).callback_disabled_at is None
    assert bought(api, shop, make_listing(catalog_item, "10.00"))
    assert wallet_invariants_check().clean


@pytest.mark.parametrize("endpoint", ["HTTP 500", "HTTP 302", "closed port", "slow"])
def test_a_callback_url_is_saved_only_once_it_accepts_the_test_event(
    db, hooks, monkeypatch, endpoint
):
    from merchants.webhooks import callbacks

    actor = make_actor(name="New shop", webhook_secret=webhook_secret())
    url = hooks.url
    if endpoint == "closed port":
        url = closed_port_url()
    elif endpoint == "slow":
        monkeypatch.setattr(callbacks, "TEST_TIMEOUT_SECONDS", 0.5)

        def slow(_):  # type: ignore[no-untyped-def]
            import time

            time.sleep(2)  # the remote end is slower than the test timeout
            return 200, b"{}"

        hooks.answer = slow
    else:
        hooks.answer = lambda _: (int(endpoint.split()[1]), b"")
    with pytest.raises(DomainError) as refused:
        merchant_callback_url_set(merchant=actor.merchant, url=url)
    assert refused.value.spec.key == "CALLBACK_URL_TEST_FAILED"
    assert Merchant.objects.get(pk=actor.merchant.pk).callback_url == ""

    hooks.answer = lambda _: (204, b"")
    saved = merchant_callback_url_set(merchant=actor.merchant, url=hooks.url)
    assert saved.callback_url == hooks.url
    assert saved.has_active_callback
    assert hooks.received[-1].json == {"test": True}
    assert not WebhookEvent.objects.filter(merchant=actor.merchant).exists()


@pytest.mark.parametrize("secret", ["whsec_a", "whsec_", "whsec_!!!!"])
def test_a_secret_that_cannot_sign_is_a_recorded_failed_attempt(
    api, shop, listing, hooks, deliver, secret
):
    event = approved(api, shop, listing, deliver)
    Merchant.objects.filter(pk=shop.merchant.pk).update(webhook_secret=secret)
    sent = len(hooks.received)
    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts, event.lease_until) == ("pending", 1, None)
    assert event.next_attempt_at is not None
    row = WebhookDelivery.objects.get(event=event)
    assert row.status_code is None
    assert row.error
    assert len(hooks.received) == sent  # nothing unsigned went out


def test_failed_events_are_listed_and_resent_through_the_api(
    api, shop, bob, listing, hooks, deliver, outbox, django_capture_on_commit_callbacks
):
    event = approved(api, shop, listing, deliver)
    initiated = WebhookEvent.objects.get(is_approval=True)
    # The event has used its whole budget but one; the last attempt fails.
    WebhookEvent.objects.filter(pk=event.pk).update(attempts=len(RETRY_DELAYS))
    hooks.answer = lambda _: (500, b"")
    deliver(str(event.id))
    event.refresh_from_db()
    assert event.status == "failed"
    first_body = hooks.received[-1].body

    listed = api.get("/secure/webhooks/events", {"status": "failed"}, headers=shop.headers)
    assert listed.status_code == 200
    (row,) = listed.json()["data"]["events"]
    assert row == {
        "id": str(event.id),
        "type": "trade.pending",
        "status": "failed",
        "attempts": 21,
        "createdAt": row["createdAt"],
        "deliveredAt": None,
        "nextAttemptAt": None,
        "lastError": "HTTP 500",
        "payload": event.payload,
    }
    everything = api.get("/secure/webhooks/events", headers=shop.headers).json()["data"]["events"]
    assert {e["id"] for e in everything} == {str(event.id), str(initiated.id)}
    delivered = api.get("/secure/webhooks/events?status=delivered", headers=shop.headers)
    assert [e["id"] for e in delivered.json()["data"]["events"]] == [str(initiated.id)]
    bad = api.get("/secure/webhooks/events?status=lost", headers=shop.headers)
    assert_error(bad, 400, 1001, "VALIDATION_FAILED")

    # Another merchant sees none of it and cannot re-send it.
    assert api.get("/secure/webhooks/events", headers=bob.headers).json()["data"]["events"] == []
    foreign = api.post(f"/secure/webhooks/events/{event.id}/resend", headers=bob.headers)
    assert_error(foreign, 404, 3010, "WEBHOOK_EVENT_NOT_FOUND")
    event.refresh_from_db()
    assert event.status == "failed"

    # Unknown ids and approval callbacks cannot be re-sent.
    import uuid

    for unknown in (str(uuid.uuid4()), "not-a-uuid"):
        missing = api.post(f"/secure/webhooks/events/{unknown}/resend", headers=shop.headers)
        assert_error(missing, 404, 3010, "WEBHOOK_EVENT_NOT_FOUND")
    approval = api.post(f"/secure/webhooks/events/{initiated.id}/resend", headers=shop.headers)
    assert_error(approval, 409, 3002, "INVALID_TRANSITION")
    initiated.refresh_from_db()
    assert (initiated.status, initiated.attempts) == ("delivered", 1)

    # The re-send: same id and body, a fresh budget, handed to a worker after commit.
    hooks.answer = lambda _: (200, b"{}")
    outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        resent = api.post(f"/secure/webhooks/events/{event.id}/resend", headers=shop.headers)
    assert resent.status_code == 200, resent.content
    assert outbox == [str(event.id)]
    data = resent.json()["data"]
    assert (data["id"], data["status"], data["attempts"]) == (str(event.id), "pending", 0)
    assert data["nextAttemptAt"] is not None
    assert str(event.id) in webhook_events_due()
    deliver(str(event.id))
    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 1)
    assert hooks.received[-1].body == first_body
    assert hooks.received[-1].headers["webhook-id"] == str(event.id)
    webhook_event_deliver(event_id=str(event.id))  # delivered: never sent again
    assert len(hooks.of_type("trade.pending")) == 2
    after = api.get("/secure/webhooks/events?status=failed", headers=shop.headers)
    assert after.json()["data"]["events"] == []


@pytest.mark.parametrize(
    "url",
    [
        "{hooks}",  # plain http to loopback
        "https://127.0.0.1:{port}/hooks",
        "https://localhost:{port}/hooks",
        "https://10.0.0.1/hooks",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]:{port}/hooks",
    ],
)
def test_outside_the_sandbox_private_addresses_are_refused(db, hooks, settings, url):
    settings.SANDBOX = False
    port = hooks.url.split(":")[2].split("/")[0]
    target = url.format(hooks=hooks.url, port=port)
    actor = make_actor(name="Prod shop", webhook_secret=webhook_secret())
    with pytest.raises(DomainError) as refused:
        merchant_callback_url_set(merchant=actor.merchant, url=target)
    assert refused.value.spec.key == "CALLBACK_URL_TEST_FAILED"
    assert hooks.received == []
    assert Merchant.objects.get(pk=actor.merchant.pk).callback_url == ""


def test_outside_the_sandbox_events_are_not_sent_to_private_addresses(
    api, shop, listing, hooks, deliver, settings
):
    event = approved(api, shop, listing, deliver)
    sent = len(hooks.received)
    settings.SANDBOX = False
    deliver(str(event.id))
    event.refresh_from_db()
    assert (event.status, event.attempts) == ("pending", 1)
    assert "https" in WebhookDelivery.objects.get(event=event).error
    assert len(hooks.received) == sent
