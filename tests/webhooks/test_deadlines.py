"""A receiver that drips its answer's head (issue 39: ``HTTP/1.1 200 OK\\r\\nX-Pad: `` and a
byte at a time) holds an approval callback, a webhook or the callback URL's test no longer than
its attempt's deadline; the attempt is then what any timed-out attempt is: recorded as failed,
tried again. Times are bounds measured with time.monotonic."""

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from core import clock
from core.errors import DomainError
from merchants.models import Merchant
from merchants.webhooks import callbacks, delivery
from merchants.webhooks.callbacks import callback_url_test
from merchants.webhooks.models import WebhookDelivery
from merchants.webhooks.outbox import webhook_event_emit
from sandbox.models import SandboxPurchase
from tests.dripping import STATUS_LINE_DRIPPED, Drip, dripping
from tests.webhooks.conftest import approval_event, bought
from trading.models import Trade

pytestmark = pytest.mark.django_db

DEADLINE = 1.0
SLACK = 1.5  # what a loaded test machine may add before the worker has its error


@pytest.fixture
def dripper(shop, monkeypatch) -> Iterator[Drip]:
    """The shop's callback URL answers by dripping its headers; attempts last 1 s at most."""
    monkeypatch.setattr(delivery, "ATTEMPT_TIMEOUT_SECONDS", DEADLINE)
    with dripping() as server:
        Merchant.objects.filter(pk=shop.merchant.pk).update(callback_url=f"{server.url}/hooks")
        yield server


def timed(run) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    run()
    return time.monotonic() - started


def test_an_approval_callback_ends_at_its_deadline_and_is_tried_again(
    api, shop, listing, dripper, deliver
):
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)

    elapsed = timed(lambda: deliver(str(event.id)))

    assert elapsed < DEADLINE + SLACK
    event.refresh_from_db()
    assert (event.status, event.attempts, event.lease_until) == ("pending", 1, None)
    assert event.next_attempt_at > clock.now() + timedelta(seconds=1)  # the 2 s backoff
    (row,) = WebhookDelivery.objects.filter(event=event)
    assert row.status_code is None
    assert "timed out" in row.error
    assert row.latency_ms < (DEADLINE + SLACK) * 1000
    assert Trade.objects.get(pk=trade_id).status == "initiated"  # no answer, no decision
    assert not SandboxPurchase.objects.exists()
    (connection,) = dripper.wait_ended()
    assert connection.ended_at - connection.opened_at < DEADLINE + SLACK


def test_a_webhook_ends_at_its_deadline_and_is_retried(shop, dripper, deliver):
    event = webhook_event_emit(
        merchant=shop.merchant,
        type="trade.pending",
        subject_type="trade",
        subject_id="t-1",
        sequence=2,
        body_key="trade",
        body={"id": "t-1"},
    )

    elapsed = timed(lambda: deliver(str(event.id)))

    assert elapsed < DEADLINE + SLACK
    event.refresh_from_db()
    assert (event.status, event.attempts) == ("pending", 1)
    assert event.next_attempt_at > clock.now() + timedelta(seconds=20)  # 30 s +- 10 %
    (row,) = WebhookDelivery.objects.filter(event=event)
    assert (row.status_code, "timed out" in row.error) == (None, True)


def test_the_callback_url_test_fails_at_its_deadline(shop, monkeypatch):
    monkeypatch.setattr(callbacks, "TEST_TIMEOUT_SECONDS", DEADLINE)
    with dripping(head=STATUS_LINE_DRIPPED) as server:
        started = time.monotonic()
        with pytest.raises(DomainError) as refused:
            callback_url_test(merchant=shop.merchant, url=f"{server.url}/hooks")
        elapsed = time.monotonic() - started

    assert refused.value.key == "CALLBACK_URL_TEST_FAILED"
    assert "timed out" in refused.value.message
    assert elapsed < DEADLINE + SLACK
