"""The merchant's callback server is down for three days of service-clock time.

Beat's webhook sweep runs as the clock reaches each retry (tasks run in the test process; the
clock is the service clock, moved forward, never slept on). The approval callback is tried three
times and the withdrawal fails with its lock released; the ``trade.failed`` event that reports it
is retried on the backoff schedule of ``RETRY_DELAYS`` for about 72 hours, then marked failed.
When the server is back on the same URL, the merchant (API) and staff (admin) re-send it."""

import math
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.test import Client
from rest_framework.test import APIClient
from standardwebhooks.webhooks import Webhook

from core import clock
from merchants.webhooks.attempts import APPROVAL_DELAYS, RETRY_DELAYS
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from merchants.webhooks.tasks import sweep_webhooks
from tests.factories import Actor, assert_error, make_actor
from tests.faults.callback import CallbackServer
from tests.faults.conftest import buy, tasks_run_here
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from trading.models import CatalogItem, Status, Trade
from wallet.models import Transfer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

JITTER = 0.1  # RETRY_DELAYS are stretched or shrunk by up to 10 %
# How late an attempt may be after it fell due: the clock moves in whole seconds.
SWEEP_SLACK = timedelta(seconds=2)


class ServiceClock:
    def __init__(self, advance) -> None:  # type: ignore[no-untyped-def]
        self.advance = advance

    def to(self, moment: datetime) -> None:
        self.advance(max(0, math.ceil((moment - clock.now()).total_seconds())))


def attempt_times(event: WebhookEvent) -> list[datetime]:
    return list(
        WebhookDelivery.objects.filter(event=event)
        .order_by("attempt")
        .values_list("created_at", flat=True)
    )


def retried_on_schedule(
    event: WebhookEvent, delays: list[timedelta], jitter: float, moved: ServiceClock
) -> None:
    """Each retry: one sweep just before it is due sends nothing, one once it is due sends it,
    and the wait since the previous attempt is the schedule's delay (with its jitter)."""
    for number, delay in enumerate(delays, start=1):
        event.refresh_from_db()
        assert (event.status, event.attempts) == ("pending", number)
        assert event.next_attempt_at is not None
        moved.to(event.next_attempt_at - SWEEP_SLACK)
        assert sweep_webhooks() == 0
        moved.to(event.next_attempt_at)
        assert sweep_webhooks() == 1
        previous, latest = attempt_times(event)[-2:]
        assert delay * (1 - jitter) <= latest - previous <= delay * (1 + jitter) + SWEEP_SLACK


def test_three_days_down_then_back_the_failed_event_is_resent_by_api_and_admin(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    clock_advance,  # type: ignore[no-untyped-def]
    admin_client: Client,
) -> None:
    moved = ServiceClock(clock_advance)
    callback.stop()
    down_since = clock.now()
    with tasks_run_here():
        trade_id = buy(api, shop, [make_listing(catalog_item, "10.00")])
        approval = WebhookEvent.objects.get(subject_id=trade_id, is_approval=True)
        retried_on_schedule(approval, APPROVAL_DELAYS, 0.0, moved)

        # Three failed attempts time the approval out: the withdrawal fails, refunded once.
        approval.refresh_from_db()
        assert (approval.status, approval.attempts) == ("failed", 3)
        trade = Trade.objects.get(pk=trade_id)
        assert (trade.status, trade.error) == (Status.FAILED, "APPROVAL_TIMEOUT")
        assert (money(shop)["available"], money(shop)["locked"]) == (Decimal("1000.00"), 0)

        failed = WebhookEvent.objects.get(subject_id=trade_id, type="trade.failed")
        retried_on_schedule(failed, RETRY_DELAYS, JITTER, moved)
        failed.refresh_from_db()
        assert (failed.status, failed.attempts, failed.next_attempt_at) == ("failed", 21, None)
        first, *_, last = attempt_times(failed)
        total = sum(RETRY_DELAYS, timedelta())
        assert total * (1 - JITTER) <= last - first <= total * (1 + JITTER) + 21 * SWEEP_SLACK
        assert timedelta(hours=66) <= last - first <= timedelta(hours=82)  # "about 72 hours"

        moved.to(down_since + timedelta(days=3, hours=12))
        assert sweep_webhooks() == 0  # given up: nothing more is sent while it stays down
    assert not callback.received
    assert WebhookDelivery.objects.filter(event=failed).count() == 21
    assert {row.status_code for row in WebhookDelivery.objects.filter(event=failed)} == {None}

    # The merchant finds it among its failed events; an approval cannot be asked again.
    listed = api.get("/secure/webhooks/events?status=failed", headers=shop.headers)
    assert listed.status_code == 200
    ids = [e["id"] for e in listed.json()["data"]["events"]]
    assert sorted(ids) == sorted([str(failed.id), str(approval.id)])
    refused = api.post(f"/secure/webhooks/events/{approval.id}/resend", headers=shop.headers)
    assert_error(refused, 409, 3002, "INVALID_TRANSITION")
    other = make_actor(name="Other shop")
    hidden = api.post(f"/secure/webhooks/events/{failed.id}/resend", headers=other.headers)
    assert_error(hidden, 404, 3010, "WEBHOOK_EVENT_NOT_FOUND")

    callback.start()  # back, on the same URL
    with tasks_run_here():
        resent = api.post(f"/secure/webhooks/events/{failed.id}/resend", headers=shop.headers)
        assert resent.status_code == 200, resent.content
        failed.refresh_from_db()
        assert (failed.status, failed.attempts) == ("delivered", 1)

        staff = admin_client.post(
            "/admin/merchants/webhookevent/",
            {
                "action": "resend",
                "_selected_action": [str(failed.id)],
                "staff_confirm": "yes",
                "reason": "the merchant's server is back",
            },
        )
        assert staff.status_code == 302
    rows = WebhookDelivery.objects.filter(event=failed).order_by("attempt")
    assert [(r.attempt, r.status_code) for r in rows][21:] == [(22, 200), (23, 200)]
    assert callback.count(str(failed.id)) == 2
    for received in callback.received:
        assert received.json == failed.payload  # the same id and body as three days ago
        Webhook(shop.merchant.webhook_secret).verify(received.body, received.headers)

    # Re-sending a report re-runs nothing it reports: one refund, the wallet consistent.
    assert Transfer.objects.filter(kind="REFUND").count() == 1
    assert (money(shop)["available"], money(shop)["locked"]) == (Decimal("1000.00"), 0)
    assert wallet_clean()
