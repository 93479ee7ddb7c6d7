"""The request id in the work a request causes, in-process: the header a task enqueued within a
request is published with, an event's deliveries logged under the request that emitted it
whichever task delivers them, work kept for after a task run under the request it was kept for,
a request's end leaving nothing of it on the thread, and an access line that no path can split."""

import logging
from collections.abc import Callable, Iterator

import orjson
import pytest
import redis

from config.celery import REQUEST_ID_HEADER
from config.celery import app as celery_app
from core.context import (
    RequestIdLogFilter,
    context_request_bound,
    current_request_id,
    end_request,
    start_request,
)
from core.handoffs import enqueue, handoff_follow, handoffs_followed
from merchants.webhooks.delivery import webhook_event_deliver
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import webhook_event_emit
from merchants.webhooks.tasks import sweep_webhooks
from tests.factories import make_actor
from tests.webhooks.conftest import shop_actor
from tests.withdrawals.receiver import Receiver, receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """What the loggers write, with what the service's handler adds to each record."""
    caplog.handler.addFilter(RequestIdLogFilter())
    caplog.set_level(logging.INFO)
    return caplog


def published_headers() -> list[dict]:
    broker = redis.Redis.from_url(celery_app.conf.broker_url)
    return [orjson.loads(message)["headers"] for message in broker.lrange("celery", 0, -1)]


@pytest.fixture
def broker() -> Iterator[None]:
    """Tasks go to the test Redis, as in production, and are left there for the test to read."""
    celery_app.conf.task_always_eager = False
    redis.Redis.from_url(celery_app.conf.broker_url).delete("celery")
    yield
    redis.Redis.from_url(celery_app.conf.broker_url).delete("celery")


def test_a_task_enqueued_within_a_request_is_sent_with_its_id(broker: None):
    start_request("req-enqueue")
    try:
        enqueue(sweep_webhooks)
    finally:
        end_request()
    enqueue(sweep_webhooks)  # outside any request (as beat sends): no id to pass on

    within, outside = published_headers()[::-1]  # LPUSH: the newest first
    assert within["task"] == outside["task"] == "webhooks.sweep"
    assert within[REQUEST_ID_HEADER] == "req-enqueue"
    assert REQUEST_ID_HEADER not in outside


def test_an_event_is_delivered_under_the_request_that_emitted_it_whoever_delivers_it(
    hooks: Receiver,
    logged: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Callable,
):
    shop = shop_actor("Logged shop", hooks.url)
    start_request("req-emitted")
    try:
        event = webhook_event_emit(
            merchant=shop.merchant,
            type="trade.completed",
            subject_type="trade",
            subject_id="trade-logged",
            sequence=1,
            body_key="data",
            body={"id": "trade-logged"},
        )
    finally:
        end_request()
    assert event.request_id == "req-emitted"

    start_request("sweep-task-id")  # a sweep's delivery task, not the request's
    try:
        with django_capture_on_commit_callbacks(execute=True):
            webhook_event_deliver(event_id=str(event.pk))
        assert current_request_id() == "sweep-task-id"  # the task's again afterwards
    finally:
        end_request()

    (attempt,) = [r for r in logged.records if r.name == "webhooks"]
    assert attempt.request_id == "req-emitted"  # type: ignore[attr-defined]
    assert attempt.merchant_id == str(shop.merchant.pk)  # type: ignore[attr-defined]
    message = attempt.getMessage()
    assert message.startswith(f"webhook trade.completed {event.pk} attempt 1: HTTP 200")
    assert attempt.log_fields["outcome"] == "delivered"  # type: ignore[attr-defined]
    assert WebhookEvent.objects.get(pk=event.pk).status == "delivered"


def test_an_event_emitted_outside_any_request_keeps_no_id(hooks: Receiver):
    shop = shop_actor("Quiet shop", hooks.url)
    event = webhook_event_emit(
        merchant=shop.merchant,
        type="trade.completed",
        subject_type="trade",
        subject_id="trade-unlogged",
        sequence=1,
        body_key="data",
        body={},
    )
    assert event.request_id == ""


def test_work_kept_for_after_a_task_runs_under_the_request_it_was_kept_for():
    seen: list[str] = []
    start_request("task-own-id")
    try:
        with handoffs_followed():
            with context_request_bound("req-of-the-approval"):
                assert handoff_follow(lambda: seen.append(current_request_id()))
            assert handoff_follow(lambda: seen.append(current_request_id()))
    finally:
        end_request()
    assert seen == ["req-of-the-approval", "task-own-id"]


def test_a_request_ended_leaves_nothing_of_it_on_the_thread(logged: pytest.LogCaptureFixture):
    start_request("req-ended")
    end_request()
    logging.getLogger("tests.after").warning("after the request")
    (after,) = [r for r in logged.records if r.name == "tests.after"]
    assert after.request_id == "-"  # type: ignore[attr-defined]
    assert after.merchant_id is None  # type: ignore[attr-defined]


def test_a_path_cannot_write_a_line_of_its_own(api, logged: pytest.LogCaptureFixture):
    """A line break sent percent-encoded in the path is logged encoded again, on the one line
    of its request (as the text format writes it, too)."""
    actor = make_actor(name="Forger")
    forged = "/v1/trades/x%0A2026-01-01 INFO access requestId=forged GET"
    answered = api.get(forged, headers={"api-key": actor.api_key})
    (access,) = [r for r in logged.records if r.name == "access"]
    assert "\n" not in access.getMessage()
    assert access.log_fields["path"] == (  # type: ignore[attr-defined]
        "/v1/trades/x%0A2026-01-01%20INFO%20access%20requestId%3Dforged%20GET"
    )
    assert access.log_fields["status"] == answered.status_code  # type: ignore[attr-defined]
