"""Staff racing each other for the same money, through the admin on real threads and real
PostgreSQL connections: nobody overdraws, nothing deadlocks, the ledger stays balanced."""

import threading
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from ledger.models import Funding
from tests.factories import make_actor
from wallet.models import Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db(transaction=True)

ADJUST = "/admin/ledger/funding/adjust/"
TRANSFER = "/admin/ledger/funding/transfer/"


def race(calls: list[Callable[[Client], object]]) -> list[int]:
    """Each call on its own thread, logged-in admin client and database connection, all let go
    at once; returns the HTTP status of each."""
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-ops-123")
    start = threading.Barrier(len(calls))
    statuses: list[int] = [0] * len(calls)

    def run(index: int, call: Callable[[Client], object]) -> None:
        try:
            client = Client()
            client.force_login(user)
            start.wait()
            statuses[index] = call(client).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return statuses


def available(actor) -> Decimal:
    return wallet_balances(merchant=actor.merchant)["available"]


def debit(actor, amount: str) -> Callable[[Client], object]:
    body = {"merchant": str(actor.merchant.pk), "direction": "debit", "amount": amount}
    return lambda client: client.post(ADJUST, {**body, "reason": "race"})


def send(source, target, amount: str) -> Callable[[Client], object]:
    body = {"source": str(source.merchant.pk), "target": str(target.merchant.pk)}
    return lambda client: client.post(TRANSFER, {**body, "amount": amount, "reason": "race"})


def test_racing_debits_never_overdraw():
    alice = make_actor(name="Alice")
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("100.00"), reason="opening")

    statuses = race([debit(alice, "30.00") for _ in range(6)])

    # 302: done; 200: the form again, refused for lack of money.
    assert sorted(statuses) == [200, 200, 200, 302, 302, 302]
    assert available(alice) == Decimal("10.00")
    assert Transfer.objects.filter(kind="ADMIN_DEBIT").count() == 3
    assert LogEntry.objects.count() == 3
    assert wallet_invariants_check().clean


def test_racing_transfers_and_debits_both_ways_never_overdraw_or_deadlock():
    alice = make_actor(name="Alice")
    bob = make_actor(name="Bob")
    for actor in (alice, bob):
        wallet_admin_credit(merchant=actor.merchant, amount=Decimal("100.00"), reason="opening")
    calls = [
        *(send(alice, bob, "40.00") for _ in range(4)),
        *(send(bob, alice, "40.00") for _ in range(4)),
        debit(alice, "50.00"),
        debit(bob, "50.00"),
    ]

    statuses = race(calls)

    assert set(statuses) <= {200, 302}
    assert 0 not in statuses  # every thread answered
    debited = Decimal(50) * Transfer.objects.filter(kind="ADMIN_DEBIT").count()
    assert available(alice) >= 0
    assert available(bob) >= 0
    assert available(alice) + available(bob) + debited == Decimal("200.00")
    moved = Transfer.objects.filter(kind="INTERNAL_TRANSFER").count()
    assert moved == statuses[:8].count(302)
    assert Funding.objects.count() == 2 * moved
    # One audit entry per merchant side of a transfer, one per debit.
    assert LogEntry.objects.count() == 2 * moved + statuses[8:].count(302)
    assert wallet_invariants_check().clean
