"""The service behind a real PgBouncer in transaction pooling mode: gunicorn and the Celery worker
reach the test database only through it, four server connections shared by every client
connection of both, so consecutive transactions of one pooled connection run on different
server connections. The race suite's money endpoints (tests/races, imported here and run
against these processes) keep their exactly-once effects and a clean ``check_wallet``: nothing
the service does leaves session state between transactions (its advisory locks, ``SET LOCAL``
and ``SET TRANSACTION`` are transaction-scoped; with ``DATABASE_TRANSACTION_POOLING`` psycopg
prepares nothing and ``QuerySet.iterator()`` opens no server-side cursor)."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from tests.faults.conftest import web_serving
from tests.faults.processes import Process, celery_worker, service_env
from tests.ops.pgbouncer import PgBouncer
from tests.races.conftest import (
    _service_quiet_at_the_end,
    _tasks_go_to_the_broker,
    ak,
    api_burst,
    bot,
    callback,
    catalog_item,
    cheap,
    door,
    knife,
    money,
    outcomes,
    shop,
    wallet_clean,
    worker,
    world,
)
from tests.races.test_cancels import test_each_item_is_cancelled_and_refunded_once
from tests.races.test_crypto import test_one_request_id_makes_one_cashout
from tests.races.test_deposits import (
    alice,
    bob,
    test_client_deposits_and_sells_of_two_merchants_take_one_asset_once,
    test_thirty_sells_of_one_asset_make_one_trade_credited_once,
)
from tests.races.test_webhooks import test_thirty_resends_of_a_failed_event_send_it_once
from tests.races.test_withdrawals import (
    test_buys_racing_for_the_last_dollar_lock_only_what_there_is,
    test_cashouts_right_after_buys,
    test_thirty_quick_buys_of_one_merchant,
)

__all__ = [
    "_service_quiet_at_the_end",
    "_tasks_go_to_the_broker",
    "ak",
    "alice",
    "bob",
    "bot",
    "callback",
    "catalog_item",
    "cheap",
    "door",
    "knife",
    "test_buys_racing_for_the_last_dollar_lock_only_what_there_is",
    "test_cashouts_right_after_buys",
    "test_client_deposits_and_sells_of_two_merchants_take_one_asset_once",
    "test_each_item_is_cancelled_and_refunded_once",
    "test_one_request_id_makes_one_cashout",
    "test_thirty_quick_buys_of_one_merchant",
    "test_thirty_resends_of_a_failed_event_send_it_once",
    "test_thirty_sells_of_one_asset_make_one_trade_credited_once",
    "worker",
    "world",
]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
POOL_SIZE = 4  # server connections PgBouncer keeps to the database


@pytest.fixture(scope="module")
def pgbouncer(django_db_setup: None) -> Iterator[PgBouncer]:
    db = connection.settings_dict
    bouncer = PgBouncer(
        host=db["HOST"] or "127.0.0.1",
        port=int(db["PORT"] or 5432),
        dbname=db["NAME"],
        pool_size=POOL_SIZE,
    )
    yield bouncer.start()
    bouncer.stop()


def behind(bouncer: PgBouncer) -> dict[str, str]:
    env = service_env(database_url=bouncer.url, redis_url=settings.REDIS_URL)
    return env | {"DATABASE_TRANSACTION_POOLING": "true"}


@pytest.fixture(scope="module")
def web(pgbouncer: PgBouncer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn (two processes, each with its own pool of up to 20 connections) through
    PgBouncer."""
    with web_serving(behind(pgbouncer), tmp_path_factory.mktemp("web") / "web.log") as base:
        yield base


@pytest.fixture(scope="module")
def module_worker(
    pgbouncer: PgBouncer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Process]:
    """The race suite's worker, with eight threads and their pool, through PgBouncer."""
    log: Path = tmp_path_factory.mktemp("worker") / "worker.log"
    process = celery_worker(behind(pgbouncer), log, "threads")
    process.argv[process.argv.index("--concurrency") + 1] = "8"
    yield process.start()
    process.stop()


def test_every_transaction_went_through_a_few_shared_server_connections(
    pgbouncer: PgBouncer, web: str, worker: Process, callback
):
    """What makes this suite mean anything: the processes reach the database only through
    PgBouncer, in transaction mode, many clients on at most POOL_SIZE server connections."""
    (before,) = [row for row in pgbouncer.show("STATS") if row["database"] == pgbouncer.dbname]
    actor = shop(callback.url, balance="0")

    def balance(session: requests.Session) -> requests.Response:
        return session.get(f"{web}/v1/wallets/me/balance", headers=actor.headers, timeout=60)

    answers = api_burst([balance] * 30)
    assert outcomes(answers) == {(200, None): 30}
    assert money(actor)["available"] == 0
    (after,) = [row for row in pgbouncer.show("STATS") if row["database"] == pgbouncer.dbname]
    assert int(after["total_xact_count"]) - int(before["total_xact_count"]) >= 30
    (pool,) = [row for row in pgbouncer.show("POOLS") if row["database"] == pgbouncer.dbname]
    assert pool["pool_mode"] == "transaction"
    servers = [row for row in pgbouncer.show("SERVERS") if row["database"] == pgbouncer.dbname]
    clients = [row for row in pgbouncer.show("CLIENTS") if row["database"] == pgbouncer.dbname]
    assert len(servers) <= POOL_SIZE
    assert len(clients) > POOL_SIZE  # both gunicorn processes' pools and the worker's
    wallet_clean()
