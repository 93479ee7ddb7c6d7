"""Row locks take only the rows meant, never the merchant's, and never more than ``FOR NO KEY
UPDATE``: a buy or a cashout commits while a worker holds one of the merchant's trades (its
deferred foreign-key checks need ``FOR KEY SHARE`` of the merchant row). A deadlock or a
serialization failure that still happens is retried where the work is database writes only,
and is otherwise answered as 409 ``TRANSACTION_CONFLICT``, never as a lost database."""

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from functools import partial

import psycopg
import pytest
from django.db import connection, transaction
from django.db.models import Model
from rest_framework.test import APIClient

from core import clock
from merchants.models import Merchant
from merchants.webhooks.delivery import webhook_event_deliver
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import Approval
from tests.crypto.conftest import cashout_body
from tests.factories import Actor, assert_error
from tests.faults.database import backends_waiting_on_lock, database_url
from tests.faults.processes import wait_until
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from tests.withdrawals.receiver import Receiver
from trading.models import CatalogItem, Status, Trade, TradeItem
from trading.trades.services import trade_lock
from trading.withdrawals.services.lifecycle import withdrawal_approval_resolve
from wallet.models import Account
from wallet.services import account_get

pytestmark = pytest.mark.django_db(transaction=True)

TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner=42&token=Ab3_x-Z9"


def buy_body(item: CatalogItem, price: str = "10.00") -> dict[str, object]:
    listing = make_listing(item, price)
    return {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": Decimal("10.50")}]}


def in_thread(work: Callable[[], object]) -> None:
    try:
        work()
    finally:
        connection.close()


def post(actor: Actor, path: str, body: object = None):
    try:
        return APIClient().post(path, body, format="json", headers=actor.headers)
    finally:
        connection.close()


@pytest.fixture
def waiting(alice_funded: Actor, catalog_item: CatalogItem, hooks: Receiver) -> str:
    """A self buy whose approval callback got no answer yet: initiated, 10.50 locked."""
    hooks.answer = lambda _: (503, b"")
    response = post(alice_funded, "/secure/buy", buy_body(catalog_item))
    assert response.status_code == 200, response.content
    trade_id = str(response.json()["data"]["id"])
    assert Trade.objects.get(pk=trade_id).status == Status.INITIATED
    return trade_id


@contextmanager
def outside() -> Iterator[psycopg.Connection]:
    """Another client of the database, in a transaction the test rolls back. It never detects a
    deadlock itself (a long ``deadlock_timeout``), so the service's backend is the one aborted."""
    with psycopg.connect(database_url()) as conn:
        conn.execute("SET deadlock_timeout = '60s'")
        try:
            yield conn
        finally:
            conn.rollback()


def lock(
    conn: psycopg.Connection, model: type[Model], pk: object, mode: str, key: str = "id"
) -> None:
    """``SELECT ... FOR <mode>`` of ``model``'s rows whose ``key`` is ``pk``."""
    name = model._meta.db_table
    conn.execute(f'SELECT 1 FROM "{name}" WHERE {key} = %s FOR {mode}', [pk])


def test_trade_lock_leaves_the_merchant_and_key_checks_free(alice_funded, waiting):
    merchant_id = alice_funded.merchant.pk
    with transaction.atomic(), outside() as other:
        trade_lock(trade_id=waiting)

        lock(other, Merchant, merchant_id, "UPDATE NOWAIT")
        lock(other, Trade, waiting, "KEY SHARE NOWAIT")
        lock(other, TradeItem, waiting, "KEY SHARE NOWAIT", key="trade_id")
        with pytest.raises(psycopg.errors.LockNotAvailable):  # the trade itself is held
            lock(other, Trade, waiting, "NO KEY UPDATE NOWAIT")


def test_recording_an_approval_leaves_the_merchant_free(alice_funded, waiting, hooks):
    """The webhook worker locks the event, then the trade, then the wallet: while it waits for
    the wallet, the merchant row is free (the event's lock took only the event's row)."""
    hooks.answer = lambda _: (402, b"")  # the merchant rejects: the refund needs the wallet
    event = WebhookEvent.objects.get(subject_id=waiting, is_approval=True)
    WebhookEvent.objects.filter(pk=event.pk).update(next_attempt_at=clock.now(), lease_until=None)
    available = account_get(merchant=alice_funded.merchant, kind=Account.Kind.AVAILABLE)

    with outside() as wallet, outside() as other:
        lock(wallet, Account, available.pk, "UPDATE")
        deliver = partial(webhook_event_deliver, event_id=str(event.pk))
        worker = threading.Thread(target=in_thread, args=(deliver,))
        worker.start()
        wait_until(lambda: backends_waiting_on_lock("UPDATE"), "the refund to wait")
        lock(other, Merchant, alice_funded.merchant.pk, "UPDATE NOWAIT")
        other.rollback()
        wallet.rollback()
        worker.join(30)

    assert Trade.objects.get(pk=waiting).status == Status.FAILED
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert wallet_clean()


@pytest.mark.parametrize("then", ["buy", "cashout"])
def test_a_buy_or_a_cashout_commits_while_an_approval_holds_a_trade(
    alice_funded, catalog_item, waiting, then
):
    """The issue's "cashout right after a buy": the approval of the buy holds its trade and is
    about to refund; the merchant's next request must neither wait for it nor deadlock it."""
    listing = make_listing(catalog_item, "20.00")
    body = {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": Decimal("21.00")}]}
    held, go = threading.Event(), threading.Event()
    failures: list[BaseException] = []
    answers: list[tuple[int, str]] = []

    def approval() -> None:
        try:
            with transaction.atomic():
                trade_lock(trade_id=waiting)
                held.set()
                assert go.wait(30)
                withdrawal_approval_resolve(waiting, Approval.REJECTED, "no")
        except BaseException as exc:  # reported by the test
            failures.append(exc)
        finally:
            held.set()
            connection.close()

    def request() -> None:
        if then == "buy":
            response = post(alice_funded, "/secure/buy", body)
        else:
            cashout = cashout_body(platformId="76561197960265729", chain="BSC", amountCents=2500)
            response = post(alice_funded, "/secure/crypto/withdraw", cashout)
        answers.append((response.status_code, response.content.decode()))

    worker = threading.Thread(target=approval)
    worker.start()
    assert held.wait(30)
    client = threading.Thread(target=request)
    client.start()
    # Either the request committed, or it waits for the approval's locks (on main: its
    # commit's foreign-key check waits for the merchant row).
    wait_until(lambda: answers or backends_waiting_on_lock(""), "the request to end or wait")
    go.set()
    client.join(30)
    worker.join(30)

    assert failures == []
    assert len(answers) == 1
    assert answers[0][0] == 200, answers[0][1]
    assert Trade.objects.get(pk=waiting).status == Status.FAILED
    spent = Decimal("21.00") if then == "buy" else Decimal("25.00")
    assert money(alice_funded)["available"] == Decimal("1000.00") - spent
    assert wallet_clean()


def test_a_deadlocked_buy_is_retried(alice_funded, catalog_item, hooks, caplog):
    """The buy's transaction is aborted by a deadlock with another client; it runs again and
    succeeds, with the total locked once."""
    merchant = alice_funded.merchant
    available = account_get(merchant=merchant, kind=Account.Kind.AVAILABLE)
    locked = account_get(merchant=merchant, kind=Account.Kind.LOCKED)
    assert available.pk < locked.pk  # the buy updates them in this order
    body = buy_body(catalog_item)
    answers: list[int] = []
    caplog.set_level(logging.WARNING, logger="core.db")

    with outside() as other:
        lock(other, Account, locked.pk, "UPDATE")
        client = threading.Thread(
            target=lambda: answers.append(post(alice_funded, "/secure/buy", body).status_code)
        )
        client.start()
        wait_until(lambda: backends_waiting_on_lock("UPDATE"), "the buy to wait for the lock")
        # The cycle: the buy holds ``available`` and waits for ``locked``; this waits for
        # ``available``. PostgreSQL aborts the buy's transaction.
        lock(other, Account, available.pk, "UPDATE")
    client.join(30)

    assert answers == [200]
    assert "transaction conflict (attempt 1 of 3)" in caplog.text
    assert Trade.objects.count() == 1
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert wallet_clean()


def test_a_deadlock_that_is_not_retried_is_a_conflict_not_an_outage(alice_funded, waiting):
    """A cancel asks the marketplace inside its transaction, so it is not run again: the
    caller gets 409 TRANSACTION_CONFLICT (retry), and nothing changed."""
    answers = []
    with outside() as other:
        lock(other, TradeItem, waiting, "UPDATE", key="trade_id")
        client = threading.Thread(
            target=lambda: answers.append(post(alice_funded, f"/secure/buy/{waiting}/cancel"))
        )
        client.start()
        wait_until(lambda: backends_waiting_on_lock("SELECT"), "the cancel to wait for the lock")
        lock(other, Trade, waiting, "UPDATE")
    client.join(30)

    (response,) = answers
    assert_error(response, 409, 1009, "TRANSACTION_CONFLICT")
    assert response["Retry-After"] == "1"
    assert not TradeItem.objects.filter(trade_id=waiting, cancel_requested_at__isnull=False)
    assert not WebhookEvent.objects.filter(type="trade.canceled").exists()
