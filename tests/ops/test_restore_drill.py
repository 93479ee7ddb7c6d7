"""The restore drill of docs/ops/backup.md, run for real: the test database is dumped with
``pg_dump`` while a thread keeps buying and moving money in it, restored with ``createdb`` and
``pg_restore`` into a new database, and the service is run on the copy as a deployment runs
it: ``manage.py check_wallet`` finds the wallet clean, and a Celery worker on the copy, sent the
sweep beat sends, delivers every webhook the dump held pending to the merchant's receiver, as
the outbox promises when the broker (Redis) is lost with the machine. Nothing written after the
dump is in the copy or sent from it."""

import subprocess
import sys
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
import redis
from django.conf import settings
from django.db import connection, connections
from rest_framework.test import APIClient

from config.celery import app as celery_app
from core.handoffs import HANDOFFS
from ledger.services import funding_internal_transfer
from merchants.webhooks.outbox import WEBHOOK_DELIVERY
from merchants.webhooks.tasks import sweep_webhooks
from sandbox.models import SandboxListing
from tests.factories import Actor, make_actor, trade_url
from tests.faults.callback import CallbackServer
from tests.faults.database import database_url
from tests.faults.processes import Process, celery_worker, service_env, wait_until
from tests.ops.postgres import _bin
from tests.withdrawals.conftest import catalog_item, funded, make_listing
from trading.models import CatalogItem, Trade
from wallet.services import wallet_admin_credit

__all__ = ["catalog_item"]

pytestmark = pytest.mark.slow
LISTINGS = 60
WRITES_BEFORE_THE_DUMP = 12
WRITES_AFTER_THE_DUMP = 6
DRILL_DEADLINE_SECONDS = 180.0


class Writer(threading.Thread):
    """Buys (each writes a trade, its lock and an approval webhook) and money moves between the
    two merchants, one after another until stopped; counts what it committed."""

    def __init__(self, alice: Actor, bob: Actor, listings: list[SandboxListing]) -> None:
        super().__init__(daemon=True)
        self.alice, self.bob, self.listings = alice, bob, listings
        self.written = 0
        self.failure: BaseException | None = None
        self.stop = threading.Event()
        self.progress = threading.Condition()

    def run(self) -> None:
        api = APIClient()
        try:
            while not self.stop.is_set() and self.listings:
                shop = (self.alice, self.bob)[self.written % 2]
                if self.written % 3 == 2:
                    other = self.bob if shop is self.alice else self.alice
                    funding_internal_transfer(
                        source=shop.merchant,
                        target=other.merchant,
                        amount=Decimal("1.25"),
                        reason="restore drill",
                    )
                else:
                    listing = self.listings.pop()
                    body = {
                        "tradeUrl": trade_url(42),
                        "items": [
                            {"itemId": listing.id, "price": float(listing.price * Decimal("1.05"))}
                        ],
                    }
                    answer = api.post("/secure/buy", body, format="json", headers=shop.headers)
                    assert answer.status_code == 200, answer.content
                with self.progress:
                    self.written += 1
                    self.progress.notify_all()
        except BaseException as exc:
            self.failure = exc
        finally:
            connections.close_all()

    def wait_for(self, writes: int) -> None:
        with self.progress:
            assert self.progress.wait_for(
                lambda: self.written >= writes or self.failure is not None, timeout=120
            ), f"{self.written} writes"
        assert self.failure is None, self.failure


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def postgres_args() -> list[str]:
    db = connection.settings_dict
    return [
        "-h",
        db["HOST"] or "127.0.0.1",
        "-p",
        str(db["PORT"] or 5432),
        "-U",
        db["USER"] or "postgres",
    ]


@pytest.fixture
def restored_name(transactional_db: None) -> Iterator[str]:
    name = f"{connection.settings_dict['NAME']}_restored"
    drop = [_bin("dropdb"), *postgres_args(), "--if-exists", "--force", name]
    run(drop)
    yield name
    run(drop)


@pytest.fixture
def receiver() -> Iterator[CallbackServer]:
    server = CallbackServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def broker_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """The live service's deliveries never reach a worker (the broker went down with the
    machine): what the dump holds pending stays pending."""
    monkeypatch.setitem(HANDOFFS.bindings, WEBHOOK_DELIVERY, lambda event_id: None)
    celery_app.conf.task_always_eager = False


def pending_events(url: str) -> dict[str, str]:
    """Pending webhook events of a database, by id: their merchant."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id::text, merchant_id::text FROM merchants_webhookevent"
            " WHERE status = 'pending'"
        ).fetchall()
    return dict(rows)


def count(url: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        (number,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(number)


def test_a_dump_taken_under_writes_restores_into_a_service_that_runs(
    receiver: CallbackServer,
    broker_lost: None,
    catalog_item: CatalogItem,
    restored_name: str,
    tmp_path: Path,
):
    alice = funded(make_actor(name="Alice"), "1000.00", receiver.url)
    bob = funded(make_actor(name="Bob"), "1000.00", receiver.url)
    wallet_admin_credit(merchant=bob.merchant, amount=Decimal("5.00"), reason="before the drill")
    listings = [make_listing(catalog_item, "10.00") for _ in range(LISTINGS)]
    live = database_url()
    writer = Writer(alice, bob, listings)
    writer.start()
    try:
        writer.wait_for(WRITES_BEFORE_THE_DUMP)
        dump = tmp_path / "trading.dump"
        dumped = run(
            [
                _bin("pg_dump"),
                *postgres_args(),
                "-Fc",
                "-f",
                str(dump),
                connection.settings_dict["NAME"],
            ]
        )
        assert dumped.returncode == 0, dumped.stderr
        at_dump = writer.written
        writer.wait_for(at_dump + WRITES_AFTER_THE_DUMP)  # writes went on past the snapshot
    finally:
        writer.stop.set()
        writer.join(timeout=60)
    assert writer.failure is None, writer.failure

    created = run([_bin("createdb"), *postgres_args(), restored_name])
    assert created.returncode == 0, created.stderr
    restored = run(
        [_bin("pg_restore"), *postgres_args(), "--exit-on-error", "-d", restored_name, str(dump)]
    )
    assert restored.returncode == 0, restored.stderr
    copy = live.rsplit("/", 1)[0] + f"/{restored_name}"

    # The copy is the database as it was at one instant of the writes.
    assert 0 < count(copy, "trading_trade") < count(live, "trading_trade")
    assert count(copy, "ledger_funding") < count(live, "ledger_funding")
    owed = pending_events(copy)
    later = set(pending_events(live)) - set(owed)
    assert owed
    assert later  # events written after the dump: the copy never sends them

    env = service_env(database_url=copy, redis_url=settings.REDIS_URL)
    manage = [sys.executable, "manage.py"]
    checked = run([*manage, "check_wallet"], env)
    assert checked.returncode == 0, checked.stderr
    assert "wallet invariants hold" in checked.stdout

    broker = redis.Redis.from_url(celery_app.conf.broker_url)
    worker: Process = celery_worker(env, tmp_path / "worker.log")
    worker.start()
    try:
        sweep_webhooks.delay()  # beat's sweep, handed to the worker on the copy
        wait_until(
            lambda: set(owed) <= set(receiver.ids()),
            "every pending webhook of the dump delivered",
            alive=[worker],
            deadline=DRILL_DEADLINE_SECONDS,
        )
        # And what those deliveries made due (the approved purchases, their webhooks) is done:
        # nothing queued, nothing taken and unacknowledged.
        wait_until(
            lambda: not broker.llen("celery") and not broker.hlen("unacked"),
            "the worker to finish",
            alive=[worker],
            deadline=DRILL_DEADLINE_SECONDS,
        )
    finally:
        worker.stop()

    secrets = {str(a.merchant.pk): a.merchant.webhook_secret for a in (alice, bob)}
    for received in receiver.received:
        signers = [owner for owner, secret in secrets.items() if received.verifies(secret)]
        assert signers == [owed.get(received.json["id"], signers[0] if signers else "")]
    assert not later & set(receiver.ids())
    checked = run([*manage, "check_wallet"], env)
    assert checked.returncode == 0, checked.stderr
    assert Trade.objects.count() == count(live, "trading_trade")  # the live database untouched
