"""The approval's answer hands the purchase to a task of its own (with its own time limit, in
trading) once it commits; the delivery task then delivers the ``trade.pending`` its answer
emitted itself. A purchase that fails in its task is left to the purchase sweep."""

import pytest

from core.handoffs import HANDOFFS, handoff_follow, handoffs_followed
from merchants.webhooks import tasks as webhook_tasks
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import WEBHOOK_DELIVERY
from merchants.webhooks.tasks import deliver_webhook
from sandbox.models import SandboxPurchase
from tests.webhooks.conftest import approval_event, bought, trade_events
from trading import tasks
from trading.models import Trade
from trading.withdrawals.services.lifecycle import PURCHASE
from trading.withdrawals.services.sweeps import PURCHASE_GRACE, withdrawal_purchases_due

# Real commits: the hand-off runs at the delivery's commit, inside the task.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[object, ...]]]:
    """Tasks the trading hand-offs give the broker."""
    sent: list[tuple[str, tuple[object, ...]]] = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: sent.append((task.name, args)))
    return sent


def test_the_approval_hands_the_purchase_to_its_own_task(api, shop, listing, hooks, enqueued):
    trade_id = bought(api, shop, listing)

    deliver_webhook.apply(args=[str(approval_event(trade_id).id)])

    assert enqueued == [("trading.withdrawal_purchase", (trade_id,))]
    assert not SandboxPurchase.objects.exists()
    assert Trade.objects.get(pk=trade_id).status == "pending"
    tasks.purchase_withdrawal.apply(args=[trade_id])
    (purchase,) = SandboxPurchase.objects.all()
    assert purchase.listing_id == listing.id


def test_the_approval_task_delivers_the_event_its_answer_emitted(
    api, shop, listing, hooks, enqueued, monkeypatch
):
    sent: list[str] = []
    monkeypatch.setattr(webhook_tasks, "enqueue", lambda task, *args: sent.append(args[0]))
    monkeypatch.setitem(HANDOFFS.bindings, WEBHOOK_DELIVERY, webhook_tasks.enqueue_delivery)
    done: list[str] = []
    deliver = webhook_tasks.webhook_event_deliver

    def delivered(*, event_id: str) -> None:
        done.append(WebhookEvent.objects.get(pk=event_id).type)
        deliver(event_id=event_id)

    monkeypatch.setattr(webhook_tasks, "webhook_event_deliver", delivered)
    trade_id = bought(api, shop, listing)
    sent.clear()  # the approval callback's own hand-off, from the request

    deliver_webhook.apply(args=[str(approval_event(trade_id).id)])

    assert done == ["trade.initiated", "trade.pending"]
    assert sent == []
    assert enqueued == [("trading.withdrawal_purchase", (trade_id,))]
    assert [event.status for event in trade_events(trade_id)] == ["delivered", "delivered"]
    assert len(hooks.of_type("trade.pending")) == 1


def test_an_event_emitted_outside_a_delivery_task_gets_a_task(api, shop, listing, monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(webhook_tasks, "enqueue", lambda task, *args: sent.append(args[0]))
    monkeypatch.setitem(HANDOFFS.bindings, WEBHOOK_DELIVERY, webhook_tasks.enqueue_delivery)

    trade_id = bought(api, shop, listing)

    assert sent == [str(approval_event(trade_id).id)]


def test_a_failed_purchase_after_the_approval_is_left_to_the_sweep(
    api, shop, listing, hooks, monkeypatch, clock_advance
):
    def out_of_service(*, trade_id: str) -> None:
        raise ConnectionError("the marketplace hung up")

    monkeypatch.setattr(tasks, "withdrawal_fulfil", out_of_service)
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)

    # The purchase's task runs eagerly at the answer's commit, and fails on its own.
    assert deliver_webhook.apply(args=[str(event.id)]).successful()

    event.refresh_from_db()
    assert event.status == "delivered"
    assert not SandboxPurchase.objects.exists()
    clock_advance(int(PURCHASE_GRACE.total_seconds()) + 1)
    assert withdrawal_purchases_due() == [trade_id]


def test_work_kept_by_a_block_that_raised_is_not_done():
    done: list[str] = []

    def failing_task() -> None:
        with handoffs_followed():
            assert handoff_follow(lambda: done.append("kept"))
            raise RuntimeError("the task failed")

    with pytest.raises(RuntimeError):
        failing_task()
    assert done == []
    assert handoff_follow(lambda: done.append("outside")) is False
    assert done == []


def test_the_approval_task_run_again_resumes_a_purchase_its_first_run_lost(
    api, shop, listing, hooks, monkeypatch
):
    trade_id = bought(api, shop, listing)
    event_id = str(approval_event(trade_id).id)
    with monkeypatch.context() as lost:
        lost.setitem(HANDOFFS.bindings, PURCHASE, lambda trade_id: None)
        deliver_webhook.apply(args=[event_id])
    assert not SandboxPurchase.objects.exists()

    deliver_webhook.apply(args=[event_id])  # the broker's redelivery after the worker died

    assert SandboxPurchase.objects.get().listing_id == listing.id
    assert len(hooks.of_type("trade.initiated")) == 1  # the merchant was not asked again
    deliver_webhook.apply(args=[event_id])
    assert SandboxPurchase.objects.count() == 1


def test_the_task_run_again_for_a_rejected_approval_buys_nothing(api, shop, listing, hooks):
    hooks.answer = lambda _: (200, b'{"action": "reject"}')
    trade_id = bought(api, shop, listing)
    event_id = str(approval_event(trade_id).id)

    deliver_webhook.apply(args=[event_id])
    deliver_webhook.apply(args=[event_id])

    assert Trade.objects.get(pk=trade_id).status == "failed"
    assert not SandboxPurchase.objects.exists()
