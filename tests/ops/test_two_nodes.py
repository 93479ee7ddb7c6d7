"""Two complete nodes on one PostgreSQL (the test database) and one Redis (the test's): each runs
gunicorn, a Celery worker (threads) and a feed process; one beat sends the sweeps. A round-robin
balancer (tests/ops/balancer.py) spreads every request over both nodes' gunicorn, as the
reverse proxy in front of them would.

The race suite's money endpoints (tests/races, imported and run here against the balancer, with
beat running) keep their exactly-once effects and a clean ``check_wallet``; a merchant's feed
sockets on both nodes hear its trades; and a second beat started by mistake doubles nothing:
with both sending the sweeps, every retried webhook is sent once more, never twice."""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from django.conf import settings

from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from tests.faults.database import database_url
from tests.faults.processes import (
    Process,
    celery_beat,
    celery_worker,
    free_port,
    service_env,
    wait_until,
    web_server,
)
from tests.feed.harness import FeedClient, FeedProcess
from tests.ops.balancer import Balancer
from tests.ops.metrics import parsed, value
from tests.races.conftest import (
    _service_quiet_at_the_end,
    _tasks_go_to_the_broker,
    ak,
    answer,
    bot,
    callback,
    catalog_item,
    cheap,
    door,
    knife,
    shop,
    wallet_clean,
    worker,
    world,
)
from tests.races.test_cancels import test_each_item_is_cancelled_and_refunded_once
from tests.races.test_crypto import (
    test_cashouts_racing_for_the_last_dollar,
    test_one_request_id_makes_one_cashout,
)
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
    test_one_listing_claimed_by_ten_merchants_is_bought_once,
    test_thirty_quick_buys_of_one_merchant,
)
from tests.withdrawals.conftest import make_listing
from wallet.selectors import wallet_balances

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
    "test_cashouts_racing_for_the_last_dollar",
    "test_cashouts_right_after_buys",
    "test_client_deposits_and_sells_of_two_merchants_take_one_asset_once",
    "test_each_item_is_cancelled_and_refunded_once",
    "test_one_listing_claimed_by_ten_merchants_is_bought_once",
    "test_one_request_id_makes_one_cashout",
    "test_thirty_quick_buys_of_one_merchant",
    "test_thirty_resends_of_a_failed_event_send_it_once",
    "test_thirty_sells_of_one_asset_make_one_trade_credited_once",
    "worker",
    "world",
]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner=42&token=Ab3_x-Z9"
METRICS_TOKEN = "two-nodes"


@dataclass
class Node:
    web: Process
    port: int
    worker: Process
    feed: FeedProcess

    @property
    def processes(self) -> list[Process]:
        return [self.web, self.worker, self.feed.process]


@dataclass
class Deployment:
    nodes: list[Node]
    beat: Process
    balancer: Balancer
    env: dict[str, str]
    folder: Path

    @property
    def processes(self) -> list[Process]:
        return [self.beat, *(p for node in self.nodes for p in node.processes)]


@pytest.fixture(scope="module")
def deployment(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("nodes")
    channel = f"trading-feed-test:{folder.name}"
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    env |= {"FEED_BUS": "redis", "FEED_CHANNEL": channel, "FEED_REDIS_URL": settings.REDIS_URL}
    started: list[Process] = []
    nodes: list[Node] = []
    balancer = None
    try:
        for name in ("a", "b"):
            # Each node's processes keep their metrics in the node's own folder.
            metrics = {"PROMETHEUS_MULTIPROC_DIR": str(folder / f"{name}-metrics")}
            node_env = env | metrics | {"METRICS_TOKEN": METRICS_TOKEN}
            port = free_port()
            web = web_server(node_env, port, folder / f"{name}-web.log").start()
            work = celery_worker(node_env, folder / f"{name}-worker.log", "threads")
            work.argv[work.argv.index("--concurrency") + 1] = "4"
            work.argv += ["-n", f"worker-{name}@%h"]
            work.start()
            feed = FeedProcess(folder / f"{name}-feed.log", channel=channel, **metrics)
            started += [web, work, feed.process]
            nodes.append(Node(web, port, work, feed.start()))
        beat = celery_beat(node_env, folder / "beat.log").start()  # on node b
        started.append(beat)
        for node in nodes:
            wait_until(lambda n=node: _healthy(n.port), "a node's web server", alive=started)
        balancer = Balancer([("127.0.0.1", node.port) for node in nodes])
        yield Deployment(nodes, beat, balancer, env, folder)
    finally:
        if balancer is not None:
            balancer.stop()
        for process in started:
            process.stop()


def sweeps_run(deployment: Deployment) -> float:
    """``webhooks.sweep`` runs finished by both nodes' workers, from each node's metrics."""
    done = 0.0
    for node in deployment.nodes:
        response = requests.get(
            f"http://127.0.0.1:{node.port}/metrics",
            headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
            timeout=10,
        )
        assert response.status_code == 200, response.text
        labels = {"task": "webhooks.sweep", "outcome": "success", "role": "worker"}
        done += value(parsed(response.text)[1], "trading_celery_tasks_total", labels)
    return done


def _healthy(port: int) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def web(deployment: Deployment) -> str:
    """The race suite's server: the balancer in front of both nodes."""
    return deployment.balancer.url


@pytest.fixture(scope="module")
def module_worker(deployment: Deployment) -> Process:
    """The worker the race suite watches; node b's takes tasks from the same queue."""
    return deployment.nodes[0].worker


@pytest.fixture(autouse=True)
def _every_process_up(deployment: Deployment) -> Iterator[None]:
    yield
    for process in deployment.processes:
        assert process.alive(), f"{process.name} died\n{process.log_tail()}"


def test_requests_are_spread_over_both_nodes(deployment: Deployment, web: str):
    before = dict(deployment.balancer.connections)
    for _ in range(10):
        assert requests.get(f"{web}/health", timeout=10).status_code == 200
    after = deployment.balancer.connections
    assert [after[i] - before.get(i, 0) for i in range(2)] == [5, 5]


def test_feed_events_reach_sockets_on_both_nodes(
    deployment: Deployment, web: str, callback, catalog_item
):
    actor = shop(callback.url)
    clients = [FeedClient(node.feed.url) for node in deployment.nodes]
    try:
        for client in clients:
            client.connect(auth={"apiKey": actor.api_key})
        listing = make_listing(catalog_item, "10.00")
        body = {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": 10.50}]}
        bought = answer(requests.post(f"{web}/secure/buy", json=body, headers=actor.headers))
        trade_id = bought.data["id"]
        for client in clients:  # each node's feed heard the node that wrote it, whichever
            heard = client.next("trade")["trade"]
            assert heard["id"] == trade_id
            assert heard["status"] == "initiated"
            assert client.next("trade")["trade"]["status"] == "pending"  # the approval
    finally:
        for client in clients:
            client.close()


def test_a_second_beat_doubles_nothing(
    deployment: Deployment, web: str, callback, catalog_item, clock_advance
):
    """Reports whose delivery failed are due again later; with two beats sending
    ``webhooks.sweep`` each due event is handed out twice, and the lease lets one delivery
    through: once the receiver answers, each event is answered 2xx exactly once, every post is
    recorded once, and further sweeps of both beats send nothing."""
    second = celery_beat(deployment.env, deployment.folder / "beat-2.log").start()
    answered: Counter[str] = Counter()

    def receiver_back(got) -> tuple[int, bytes]:
        answered[got.json["id"]] += 1
        return 200, b"{}"

    try:
        callback.answer = lambda got: (500, b"{}")  # the merchant's receiver fails at first
        actor = shop(callback.url, balance="1000.00")
        for _ in range(3):
            listing = make_listing(catalog_item, "10.00")
            body = {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": 10.50}]}
            answer(requests.post(f"{web}/secure/buy", json=body, headers=actor.headers))
        # Approvals are tried three times, then time out and refund; their trade.failed
        # reports fail and wait for their retries.
        failed = WebhookEvent.objects.filter(merchant=actor.merchant, type="trade.failed")
        wait_until(
            lambda: failed.filter(attempts__gte=1).count() == 3,
            "three failed reports waiting",
            alive=[*deployment.processes, second],
            deadline=180,  # each approval's retries wait for a sweep (every 10 s)
        )
        callback.answer = receiver_back
        clock_advance(3600)  # every retry due: both beats' sweeps find them

        def delivered() -> bool:
            return failed.filter(status=WebhookEvent.Status.DELIVERED).count() == 3

        wait_until(delivered, "the retries", alive=[*deployment.processes, second], deadline=90)
        # Four more sweeps run by the workers (two periods of both beats): none sends again.
        swept = sweeps_run(deployment)
        wait_until(
            lambda: sweeps_run(deployment) >= swept + 4,
            "more sweeps",
            alive=[*deployment.processes, second],
            deadline=60,
        )
        for event_id in map(str, failed.values_list("id", flat=True)):
            assert answered[event_id] == 1, event_id
            deliveries = WebhookDelivery.objects.filter(event_id=event_id)
            assert deliveries.filter(status_code=200).count() == 1
            assert callback.count(event_id) == deliveries.count()
        # Every approval timed out and its lock went back.
        assert wallet_balances(merchant=actor.merchant)["available"] == Decimal("1000.00")
        wallet_clean()
    finally:
        second.stop()
