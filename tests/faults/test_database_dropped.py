"""The database cuts every connection (a failover, an admin's ``pg_terminate_backend``) while
the real web server (gunicorn, as deployed) is busy. Requests caught by it get the retryable
envelope, 503 with code 1008 and a requestId, never a bare 500 or an HTML page, and leave
nothing half written; the next requests succeed without restarting anything. PostgreSQL itself
is shared and never restarted: only this test database's connections are cut."""

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from django.conf import settings

from merchants.webhooks.models import WebhookEvent
from tests.factories import Actor
from tests.faults.conftest import buy_body, web_serving
from tests.faults.database import (
    backends_terminate,
    backends_waiting_on_lock,
    database_url,
    rows_locked,
)
from tests.faults.processes import service_env, wait_until
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from trading.models import CatalogItem, Trade
from wallet.models import Account
from wallet.services import account_get

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CUTS = 4
SUCCESSES_BETWEEN_CUTS = 8
LOAD_THREADS = 6
SERVER_PROCESSES = 2  # gunicorn --workers, each with its own connection pool
READS = ("/secure/trades", "/secure/webhooks/events", "/health")


@dataclass(frozen=True)
class Answer:
    path: str
    status: int
    content_type: str
    header_request_id: str
    body: dict | None


def call(session: requests.Session, method: str, url: str, **kwargs: object) -> Answer:
    response = session.request(method, url, timeout=30, **kwargs)  # type: ignore[arg-type]
    try:
        body = response.json()
    except ValueError:
        body = None
    return Answer(
        url.split("/", 3)[-1],
        response.status_code,
        response.headers.get("Content-Type", ""),
        response.headers.get("X-Request-Id", ""),
        body,
    )


def enveloped(answer: Answer) -> None:
    """A JSON envelope carrying the request id of its X-Request-Id header."""
    assert answer.content_type == "application/json", answer
    assert answer.body is not None, answer
    request_id = answer.body["requestId"]
    assert str(uuid.UUID(request_id, version=4)) == request_id == answer.header_request_id


def database_unavailable(answer: Answer) -> None:
    enveloped(answer)
    assert answer.status == 503, answer
    assert answer.body is not None
    assert answer.body["success"] is False
    assert answer.body["error"]["code"] == 1008
    assert answer.body["error"]["key"] == "SERVICE_UNAVAILABLE"


def success_or_database_unavailable(answer: Answer) -> None:
    if answer.status == 200:
        enveloped(answer)
        assert answer.body is not None
        assert answer.body["success"] is True
    else:
        database_unavailable(answer)


class Load:
    """Threads calling the API (reads and buys, in turn) until stopped; each answer is kept
    with the number of cuts done when its request started."""

    def __init__(self, web: str, actor: Actor, buy: dict[str, object]) -> None:
        self.calls = [("GET", f"{web}{path}", None) for path in READS]
        self.calls.append(("POST", f"{web}/secure/buy", buy))
        self.headers = actor.headers
        self.cuts = 0
        self.started_after: list[tuple[int, Answer]] = []
        self.stop = threading.Event()

    @property
    def answers(self) -> list[Answer]:
        return [answer for _, answer in self.started_after]

    def run(self) -> None:
        session = requests.Session()
        while not self.stop.is_set():
            cuts = self.cuts
            method, url, body = self.calls[len(self.started_after) % len(self.calls)]
            answer = call(session, method, url, json=body, headers=self.headers)
            self.started_after.append((cuts, answer))

    def wait_for_successes(self) -> None:
        def recovered() -> bool:
            since = [a for cuts, a in self.started_after if cuts == self.cuts and a.status == 200]
            return len(since) >= SUCCESSES_BETWEEN_CUTS

        wait_until(recovered, f"{SUCCESSES_BETWEEN_CUTS} successes after cut {self.cuts}")


@pytest.fixture
def web(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    with web_serving(env, tmp_path / "web.log") as base:
        yield base


def test_requests_cut_off_from_the_database_get_503_envelopes_and_the_service_recovers(
    web: str, shop: Actor, catalog_item: CatalogItem
) -> None:
    before = money(shop)

    # 1. Requests provably inside the database when it goes: waiting on the merchant's wallet
    # rows, which the test holds. Their writes must vanish with them.
    listings = [make_listing(catalog_item, "10.00") for _ in range(3)]
    account_get(merchant=shop.merchant, kind=Account.Kind.LOCKED)  # all three wait to update it
    accounts = list(Account.objects.filter(merchant=shop.merchant).values_list("pk", flat=True))
    with rows_locked("wallet_account", accounts), ThreadPoolExecutor(3) as pool:
        buys = [
            pool.submit(
                call,
                requests.Session(),
                "POST",
                f"{web}/secure/buy",
                json=buy_body([listing]),
                headers=shop.headers,
            )
            for listing in listings
        ]
        wait_until(
            lambda: len(backends_waiting_on_lock('UPDATE "wallet_account"')) == len(listings),
            "the buys at the wallet",
        )
        assert backends_terminate() >= len(listings)
        for answer in (future.result() for future in buys):
            database_unavailable(answer)
    assert not Trade.objects.filter(merchant=shop.merchant).exists()
    assert not WebhookEvent.objects.filter(merchant=shop.merchant).exists()
    assert money(shop) == before

    # 2. Under load, every connection cut again and again: each answer is a success or the
    # retryable envelope, whichever side of a cut it fell on, and after each cut requests
    # started later succeed again while the load goes on.
    load = Load(web, shop, buy_body(listings[:1]))
    with ThreadPoolExecutor(LOAD_THREADS) as pool:
        threads = [pool.submit(load.run) for _ in range(LOAD_THREADS)]
        try:
            load.wait_for_successes()
            for _ in range(CUTS):
                assert backends_terminate() > 0  # the server's connections
                load.cuts += 1
                load.wait_for_successes()
        finally:
            load.stop.set()
        for thread in threads:
            thread.result()
    for answer in load.answers:
        success_or_database_unavailable(answer)
    made = [
        a.body["data"]["id"] for a in load.answers if a.path == "secure/buy" and a.status == 200
    ]
    assert made
    assert Trade.objects.filter(pk__in=made).count() == len(made)

    # 3. One more cut with nothing in flight, then calls over fresh connections (either server
    # process may take each): a process fails at most the one request that meets a dead pooled
    # connection, which has the pool replace the others; every other request succeeds, and
    # nothing was restarted.
    assert backends_terminate() > 0
    after = [
        call(requests.Session(), "GET", f"{web}{READS[n % len(READS)]}", headers=shop.headers)
        for n in range(16)
    ]
    for answer in after:
        success_or_database_unavailable(answer)
    assert sum(answer.status != 200 for answer in after) <= SERVER_PROCESSES
    bought = call(
        requests.Session(),
        "POST",
        f"{web}/secure/buy",
        json=buy_body(listings[:1]),
        headers=shop.headers,
    )
    assert bought.status == 200, bought

    # Whatever each cut interrupted, the books balance: every lock is a live trade's.
    trades = Trade.objects.filter(merchant=shop.merchant)
    locked = sum((trade.total_price for trade in trades), Decimal("0.00"))
    assert (money(shop)["available"], money(shop)["locked"]) == (1000 - locked, locked)
    assert wallet_clean()
