"""Whatever a receiver answers is recorded, and recorded once: NUL bytes (PostgreSQL text cannot
hold them), bytes that are not UTF-8 and bodies far larger than any excerpt. An answer that could
not be stored used to roll the whole attempt back and leave the event pending, so the approval
callback went out again every lease period while the trade's money stayed locked.

The receiver is a real HTTP server on loopback; deliveries run as a worker runs them."""

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import pytest
from django.db import DataError

from core.ports import APPROVAL_SUBJECTS, ApprovalSubject
from merchants.models import Merchant
from merchants.webhooks import attempts, delivery
from merchants.webhooks.delivery import LEASE, webhook_events_due
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from merchants.webhooks.outbox import webhook_event_emit
from sandbox.models import SandboxListing, SandboxPurchase
from tests.factories import Actor
from tests.webhooks.conftest import approval_event, bought, trade_events
from tests.withdrawals.receiver import Receiver
from trading.models import Trade, TradeItem
from wallet.selectors import wallet_balances, wallet_invariants_check

pytestmark = pytest.mark.django_db

HUGE = 5 * 1024 * 1024

ANSWERS = {
    "NUL bytes": b'{"ok": true}\x00\x00 and more\x00',
    "invalid UTF-8": b"\xff\xfe\x80 not \xc3\x28 text \xed\xa0\x80",
    "a huge body": b"{" + b"x" * HUGE + b"}",
    "all of them": b"\x00\xff" * (HUGE // 2),
}


def storable(text: str) -> bool:
    return "\x00" not in text


def no_resend_after_the_lease(
    event: WebhookEvent, hooks: Receiver, time_passes: Callable[[int], None]
) -> None:
    """Long after any lease ran out the sweep finds nothing, and a stray task sends nothing."""
    sent = len(hooks.received)
    time_passes(int(LEASE.total_seconds()) * 3)
    assert str(event.id) not in webhook_events_due()
    delivery.webhook_event_deliver(event_id=str(event.id))
    assert len(hooks.received) == sent


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_an_approval_answered_with_unstorable_bytes_is_applied_once(
    api, shop, listing, hooks, deliver, time_passes, answer
):
    hooks.answer = lambda _: (200, ANSWERS[answer])
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)

    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts, event.lease_until) == ("delivered", 1, None)
    (row,) = WebhookDelivery.objects.filter(event=event)
    assert (row.attempt, row.status_code, row.error) == (1, 200, "")
    assert storable(row.response_excerpt)
    assert 0 < len(row.response_excerpt) <= 500
    trade = Trade.objects.get(pk=trade_id)
    assert trade.status == "pending"
    (item,) = TradeItem.objects.filter(trade=trade)
    assert SandboxPurchase.objects.get().key == item.purchase_ref
    assert not SandboxListing.objects.filter(pk=listing.id).exists()
    assert [e.type for e in trade_events(trade_id)] == ["trade.initiated", "trade.pending"]
    no_resend_after_the_lease(event, hooks, time_passes)
    assert len(hooks.of_type("trade.initiated")) == 1
    assert SandboxPurchase.objects.count() == 1
    assert wallet_invariants_check().clean


def test_a_rejection_whose_reason_holds_nul_is_applied_once(
    api, shop, listing, hooks, deliver, time_passes
):
    answer = orjson.dumps({"action": "reject", "reason": "limit\x00reached"})
    assert b"\\u0000" in answer  # JSON's escape: it decodes to a NUL
    hooks.answer = lambda _: (200, answer)
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)

    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 1)
    trade = Trade.objects.get(pk=trade_id)
    assert (trade.status, trade.error) == ("failed", "MERCHANT_REJECTED")
    got = wallet_balances(merchant=shop.merchant)
    assert (got["available"], got["locked"]) == (Decimal("1000.00"), Decimal("0.00"))
    no_resend_after_the_lease(event, hooks, time_passes)
    assert wallet_invariants_check().clean


@pytest.mark.parametrize("answer", list(ANSWERS))
@pytest.mark.parametrize("status", [200, 500])
def test_an_ordinary_webhook_answered_with_unstorable_bytes_is_recorded(
    shop: Actor, hooks: Receiver, deliver, time_passes, answer, status
):
    hooks.answer = lambda _: (status, ANSWERS[answer])
    event = webhook_event_emit(
        merchant=shop.merchant,
        type="trade.pending",
        subject_type="trade",
        subject_id="t-1",
        sequence=2,
        body_key="trade",
        body={"id": "t-1"},
    )

    deliver(str(event.id))

    event.refresh_from_db()
    (row,) = WebhookDelivery.objects.filter(event=event)
    assert (row.status_code, row.error) == (status, "")
    assert storable(row.response_excerpt)
    assert 0 < len(row.response_excerpt) <= 500
    assert len(hooks.received) == 1
    if status == 200:
        assert (event.status, event.attempts, event.lease_until) == ("delivered", 1, None)
        no_resend_after_the_lease(event, hooks, time_passes)
    else:  # a failed attempt, retried on the schedule like any other
        assert (event.status, event.attempts, event.lease_until) == ("pending", 1, None)
        assert event.next_attempt_at is not None
        assert event.next_attempt_at - event.created_at < timedelta(minutes=2)


def test_an_approval_that_cannot_be_recorded_ends_instead_of_looping(
    shop: Actor, hooks: Receiver, deliver, time_passes, monkeypatch
):
    """Defence in depth: an answer whose outcome cannot be stored (here the subject's handler
    always fails) counts as a failed attempt; once the attempts are used up the event ends
    failed instead of being claimed and sent again every lease period."""
    outcomes: list[str] = []

    def unstorable(subject_id: str, outcome: str, reason: str) -> None:
        outcomes.append(outcome)
        raise DataError("cannot store this outcome")

    monkeypatch.setitem(
        APPROVAL_SUBJECTS.bindings,
        "broken",
        ApprovalSubject(resolve=unstorable, resume=lambda subject_id: None),
    )
    event = webhook_event_emit(
        merchant=shop.merchant,
        type="broken.initiated",
        subject_type="broken",
        subject_id="b-1",
        sequence=1,
        body_key="broken",
        body={"id": "b-1"},
        is_approval=True,
    )
    for _ in range(attempts.APPROVAL_ATTEMPTS + 2):
        time_passes(int(LEASE.total_seconds()) + 10)
        deliver()

    event.refresh_from_db()
    assert (event.status, event.next_attempt_at, event.lease_until) == ("failed", None, None)
    assert len(hooks.received) == attempts.APPROVAL_ATTEMPTS
    rows = list(WebhookDelivery.objects.filter(event=event))
    assert [r.attempt for r in rows] == [1, 2, 3]
    assert all(r.status_code is None and "could not be recorded" in r.error for r in rows)
    assert outcomes == ["approved", "approved", "approved", "timed_out"]
    no_resend_after_the_lease(event, hooks, time_passes)


DRIP_SECONDS = 20.0


@pytest.fixture
def dripping_url() -> Iterator[str]:
    """A receiver that answers 200 at once, then its body a few bytes at a time for 20 s."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.end_headers()
            until = time.monotonic() + DRIP_SECONDS
            while time.monotonic() < until:
                self.wfile.write(b"\x00 ")
                self.wfile.flush()
                time.sleep(0.01)

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # the sender hangs up mid-drip: that is the point

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks"
    server.shutdown()
    server.server_close()


def test_an_answer_that_never_ends_is_cut_at_the_attempt_timeout(
    shop: Actor, dripping_url: str, deliver, monkeypatch
):
    monkeypatch.setattr(delivery, "ATTEMPT_TIMEOUT_SECONDS", 1)
    Merchant.objects.filter(pk=shop.merchant.pk).update(callback_url=dripping_url)
    event = webhook_event_emit(
        merchant=shop.merchant,
        type="trade.pending",
        subject_type="trade",
        subject_id="t-1",
        sequence=2,
        body_key="trade",
        body={"id": "t-1"},
    )

    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 1)
    row = WebhookDelivery.objects.get(event=event)
    assert row.status_code == 200
    assert row.latency_ms is not None
    assert row.latency_ms < 5_000  # 1 s of reading, then one more read at most
    assert storable(row.response_excerpt)
