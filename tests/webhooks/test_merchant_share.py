"""One merchant's deliveries take a bounded share of the workers (issue 39 item 2): with its
share in flight, a delivery of that merchant is deferred (nothing sent, nothing changed, the
event still due) while another merchant's goes out at once; each delivery that ends hands the
oldest deferred one on; the sweep hands out every merchant's oldest due event
before any merchant's second. The concurrency is real: worker threads on their own database
connections, a receiver that holds its answers until the test releases them."""

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection

from core import clock
from merchants.models import Merchant
from merchants.webhooks import delivery
from merchants.webhooks.delivery import webhook_event_deliver, webhook_events_due
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import webhook_event_emit
from tests.faults.processes import wait_until
from tests.webhooks.conftest import shop_actor
from tests.withdrawals.receiver import Receiver, receiver

SHARE = 2


@pytest.fixture(autouse=True)
def share(settings) -> None:  # type: ignore[no-untyped-def]
    settings.WEBHOOK_DELIVERIES_PER_MERCHANT = SHARE


@pytest.fixture
def held() -> Iterator[tuple[Receiver, threading.Event, list[int]]]:
    """A receiver that answers only once released; and how many posts it holds at once."""
    release = threading.Event()
    holding = [0]
    most = [0]
    lock = threading.Lock()
    with receiver() as state:

        def answer(_):  # type: ignore[no-untyped-def]
            with lock:
                holding[0] += 1
                most[0] = max(most[0], holding[0])
            release.wait(30)
            with lock:
                holding[0] -= 1
            return 200, b"{}"

        state.answer = answer
        yield state, release, holding
        release.set()


def emit(merchant: Merchant, n: int = 1, **fields: object) -> WebhookEvent:
    return webhook_event_emit(
        merchant=merchant,
        type="trade.pending",
        subject_type="trade",
        subject_id=f"t-{n}",
        sequence=n,
        body_key="trade",
        body={"id": f"t-{n}"},
        **fields,  # type: ignore[arg-type]
    )


def in_thread(event: WebhookEvent) -> threading.Thread:
    def run() -> None:
        try:
            webhook_event_deliver(event_id=str(event.id))
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def state(event: WebhookEvent) -> tuple[str, int, object]:
    event.refresh_from_db()
    return event.status, event.attempts, event.lease_until


@pytest.mark.django_db(transaction=True)
def test_a_merchant_beyond_its_share_waits_and_another_is_not_held(held, hooks, outbox):
    slow_receiver, release, holding = held
    slow = shop_actor("Slow", slow_receiver.url).merchant
    quick = shop_actor("Quick", hooks.url).merchant
    first, second, third = emit(slow, 1), emit(slow, 2), emit(slow, 3)
    other = emit(quick, 1)
    workers = [in_thread(first), in_thread(second)]
    wait_until(lambda: holding[0] == SHARE, "the slow merchant's share in flight")

    webhook_event_deliver(event_id=str(third.id))  # deferred

    status, attempts, lease_until = state(third)
    assert (status, attempts) == ("pending", 0)
    assert lease_until is not None
    assert lease_until <= clock.real_now()  # waiting, not held
    assert len(slow_receiver.received) == SHARE
    webhook_event_deliver(event_id=str(other.id))  # not held by the slow merchant
    assert state(other)[:2] == ("delivered", 1)
    assert [r.json["id"] for r in hooks.received] == [str(other.id)]

    outbox.clear()
    release.set()
    for worker in workers:
        worker.join(30)
    assert outbox == [str(third.id)]  # handed on once, by the first delivery that ended
    webhook_event_deliver(event_id=str(third.id))
    assert [state(e)[:2] for e in (first, second, third)] == [("delivered", 1)] * 3
    assert len(slow_receiver.received) == 3


@pytest.mark.django_db(transaction=True)
def test_more_deferred_than_the_share_are_all_handed_on_as_deliveries_end(held, outbox):
    """Three deferred behind a full share: each delivery that ends hands one on, so none is
    left to the sweep even when those handed on find room and fill nothing."""
    slow_receiver, release, holding = held
    slow = shop_actor("Slow", slow_receiver.url).merchant
    first, second, *deferred = (emit(slow, n) for n in range(1, 6))
    workers = [in_thread(first), in_thread(second)]
    wait_until(lambda: holding[0] == SHARE, "the share in flight")
    for event in deferred:
        webhook_event_deliver(event_id=str(event.id))
    assert [state(e)[:2] for e in deferred] == [("pending", 0)] * 3

    outbox.clear()
    release.set()
    for worker in workers:
        worker.join(30)
    assert sorted(outbox) == sorted(str(e.id) for e in deferred[:2])  # one per ending, oldest first
    # A worker takes the hand-offs one by one, as they come (each ending hands on the next).
    for event_id in outbox:
        webhook_event_deliver(event_id=event_id)

    assert outbox == [*outbox[:2], str(deferred[2].id)]
    assert [state(e)[:2] for e in (first, second, *deferred)] == [("delivered", 1)] * 5
    assert webhook_events_due() == []


@pytest.mark.django_db
def test_a_deferral_that_finds_room_once_let_go_claims_again(hooks, outbox, monkeypatch):
    """The deliveries a deferral counted end before it lets go, so neither saw it waiting: it
    finds their room itself and goes out, instead of waiting for the sweep."""
    merchant = shop_actor("Shop", hooks.url).merchant
    counted = [emit(merchant, n) for n in (1, 2)]
    ends = clock.real_now() + timedelta(minutes=1)
    WebhookEvent.objects.filter(pk__in=[e.pk for e in counted]).update(lease_until=ends)
    late = emit(merchant, 3)
    claimed = delivery._claimed

    def counted_then_ended(**kwargs):  # type: ignore[no-untyped-def]
        claim = claimed(**kwargs)
        # Both counted deliveries end now, having found nothing waiting.
        WebhookEvent.objects.filter(pk__in=[e.pk for e in counted]).update(lease_until=None)
        return claim

    monkeypatch.setattr(delivery, "_claimed", counted_then_ended)

    webhook_event_deliver(event_id=str(late.id))

    assert state(late)[:2] == ("delivered", 1)
    assert outbox == []


@pytest.mark.django_db
def test_a_lease_left_by_a_dead_worker_takes_no_share(hooks, deliver):
    merchant = shop_actor("Shop", hooks.url).merchant
    dead = [emit(merchant, n) for n in (1, 2)]
    expired = clock.real_now() - timedelta(seconds=1)
    WebhookEvent.objects.filter(pk__in=[e.pk for e in dead]).update(lease_until=expired)
    event = emit(merchant, 3)

    deliver(str(event.id))

    assert state(event)[:2] == ("delivered", 1)


@pytest.mark.django_db
def test_the_sweep_hands_out_each_merchants_oldest_due_events_first(hooks):
    busy = shop_actor("Busy", hooks.url).merchant
    quiet = shop_actor("Quiet", hooks.url).merchant
    now = clock.now()
    backlog = [emit(busy, n) for n in range(1, 6)]
    for minutes, event in enumerate(backlog):
        WebhookEvent.objects.filter(pk=event.pk).update(
            next_attempt_at=now - timedelta(minutes=10 - minutes)
        )
    newest = emit(quiet, 1)

    assert webhook_events_due(limit=3) == [
        str(backlog[0].id),
        str(newest.id),  # not pushed out by the busy merchant's older events
        str(backlog[1].id),
    ]
    assert webhook_events_due() == [str(e.id) for e in (backlog[0], newest, *backlog[1:])]
