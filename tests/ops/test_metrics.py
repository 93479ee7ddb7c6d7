"""GET /metrics: who may read it, and what a scrape shows after the API was used: requests by
route pattern (never the raw path), statuses, latencies, the outbox, trades, money moved, tasks,
the broker's queue and the wallet check's last run. In one process (no
PROMETHEUS_MULTIPROC_DIR), so values add up across tests: each test compares before and
after."""

import io
import math
from decimal import Decimal

import pytest
import redis
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db.models import F

from core import clock
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import webhook_event_emit
from tests.eager import _eager_celery
from tests.factories import assert_error, make_actor, trade_url
from tests.ops.metrics import Samples, parsed, value
from tests.withdrawals.conftest import alice_funded, catalog_item, hooks, make_listing
from wallet.models import Account
from wallet.selectors import INVARIANTS

__all__ = ["_eager_celery", "alice_funded", "catalog_item", "hooks"]

pytestmark = pytest.mark.django_db
TOKEN = "metrics-token-for-tests"


@pytest.fixture
def metrics_token(settings):
    settings.METRICS_TOKEN = TOKEN


def scrape(api) -> Samples:
    response = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return parsed(response.content.decode())[1]


def test_without_a_configured_token_the_route_does_not_exist(api, settings):
    settings.METRICS_TOKEN = ""
    response = api.get("/metrics", headers={"Authorization": "Bearer anything"})
    assert_error(response, 404, 1002, "NOT_FOUND")


def test_a_missing_or_wrong_token_is_refused_in_the_envelope(api, metrics_token):
    assert_error(api.get("/metrics"), 401, 1108, "MISSING_BEARER")
    for header in (f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer ", f"Bearer {TOKEN[:-1]}"):
        refused = api.get("/metrics", headers={"Authorization": header})
        assert_error(refused, 401, 1102, "INVALID_TOKEN")
        assert b"trading_" not in refused.content
    assert_error(
        api.post("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}),
        405,
        1003,
        "METHOD_NOT_ALLOWED",
    )


def test_while_the_token_is_rotated_both_tokens_read_it(api, settings):
    """METRICS_TOKEN="new,old" while Prometheus moves to the new one; then "new" alone."""
    settings.METRICS_TOKEN = f"{TOKEN}-new, {TOKEN}"
    for token in (TOKEN, f"{TOKEN}-new"):
        response = api.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.content
    refused = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}-new, {TOKEN}"})
    assert_error(refused, 401, 1102, "INVALID_TOKEN")

    settings.METRICS_TOKEN = f"{TOKEN}-new"
    refused = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert_error(refused, 401, 1102, "INVALID_TOKEN")


def test_requests_are_counted_by_route_pattern_never_by_path(api, metrics_token):
    alice, bob = make_actor(name="Alice"), make_actor(name="Bob")
    route = {"route": "secure/trades/<str:tradeId>", "method": "GET"}
    before = scrape(api)

    for n, actor in enumerate((alice, bob, alice)):
        missing = api.get(f"/secure/trades/no-such-trade-{n}", headers=actor.headers)
        assert missing.status_code == 404
    api.get("/no/such/path/at-all")

    text = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).content.decode()
    after = parsed(text)[1]
    assert "no-such-trade" not in text
    assert "at-all" not in text
    counted = "trading_http_requests_total"
    assert (
        value(after, counted, route | {"status": "404"})
        - value(before, counted, route | {"status": "404"})
        == 3
    )
    unmatched = {"route": "unmatched", "status": "404"}
    assert value(after, counted, unmatched) - value(before, counted, unmatched) == 1
    latency = "trading_http_request_duration_seconds_count"
    assert value(after, latency, route) - value(before, latency, route) == 3
    assert value(after, "trading_http_request_duration_seconds_sum", route) > value(
        before, "trading_http_request_duration_seconds_sum", route
    )


def test_a_method_nobody_routes_is_one_series(api, metrics_token):
    before = scrape(api)
    api.generic("BREW", "/health")
    api.generic("PROPFIND", "/health")
    after = scrape(api)
    labels = {"route": "health", "method": "other"}
    assert (
        value(after, "trading_http_requests_total", labels)
        - value(before, "trading_http_requests_total", labels)
        == 2
    )
    assert not any(dict(labels_).get("method") == "BREW" for _, labels_ in after)


def test_a_buy_shows_in_trades_money_webhooks_and_tasks(
    api, metrics_token, alice_funded, catalog_item, hooks, django_capture_on_commit_callbacks
):
    listing = make_listing(catalog_item, "10.00")
    before = scrape(api)

    with django_capture_on_commit_callbacks(execute=True):
        bought = api.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.50}]},
            format="json",
            headers=alice_funded.headers,
        )
    assert bought.status_code == 200, bought.json()
    after = scrape(api)

    def grew(name: str, labels: dict[str, str]) -> float:
        return value(after, name, labels) - value(before, name, labels)

    moves = "trading_trade_moves_total"
    assert grew(moves, {"type": "withdraw", "status": "initiated"}) == 1
    assert grew(moves, {"type": "withdraw", "status": "pending"}) == 1
    # 10.50 locked from available when the buy was made.
    assert grew("trading_money_moved_usd_total", {}) == pytest.approx(10.50)
    attempts = "trading_webhook_attempts_total"
    assert grew(attempts, {"kind": "approval", "outcome": "delivered"}) == 1
    assert grew(attempts, {"kind": "event", "outcome": "delivered"}) == 1
    answered = {"answer": "approved"}
    assert grew("trading_approval_callback_duration_seconds_count", answered) == 1
    tasks = "trading_celery_tasks_total"
    assert grew(tasks, {"task": "webhooks.deliver", "outcome": "success"}) >= 2
    assert value(after, "trading_celery_task_last_run_timestamp_seconds") > 0
    in_flight = {"type": "withdraw", "status": "pending"}
    assert value(after, "trading_trades_in_flight", in_flight) == 1
    assert value(after, "trading_trades_in_flight", {"type": "deposit", "status": "hold"}) == 0


def test_the_outbox_depth_and_the_age_of_its_oldest_event(
    api, metrics_token, alice_funded, clock_advance, django_capture_on_commit_callbacks
):
    oldest = "trading_webhook_outbox_oldest_pending_age_seconds"
    assert value(scrape(api), "trading_webhook_outbox_pending") == 0
    assert value(scrape(api), oldest) == 0
    for n in range(3):
        webhook_event_emit(
            merchant=alice_funded.merchant,
            type="trade.updated",
            subject_type="trade",
            subject_id=f"t{n}",
            sequence=1,
            body_key="trade",
            body={"n": n},
        )
    clock_advance(600)

    samples = scrape(api)
    assert value(samples, "trading_webhook_outbox_pending", {"kind": "event"}) == 3
    assert value(samples, "trading_webhook_outbox_pending", {"kind": "approval"}) == 0
    assert 600 <= value(samples, oldest, {"kind": "event"}) < 700
    WebhookEvent.objects.update(status=WebhookEvent.Status.DELIVERED, delivered_at=clock.now())
    assert value(scrape(api), "trading_webhook_outbox_pending") == 0


def test_the_broker_queue_is_read_at_scrape_time(api, metrics_token):
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = {"queue": "celery", "state": "waiting"}
    broker.delete("celery")
    assert value(scrape(api), "trading_celery_queue_tasks", queue) == 0
    broker.rpush("celery", b"{}", b"{}")
    try:
        assert value(scrape(api), "trading_celery_queue_tasks", queue) == 2
    finally:
        broker.delete("celery")


def test_money_moved_is_counted_once_committed(
    api, metrics_token, alice, django_capture_on_commit_callbacks
):
    from wallet.services import wallet_admin_credit

    moved, kind = "trading_money_moved_usd_total", {"kind": "ADMIN_CREDIT"}
    before = value(scrape(api), moved, kind)
    with django_capture_on_commit_callbacks(execute=False):  # never committed
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal("99.99"), reason="test")
    assert value(scrape(api), moved, kind) == before
    with django_capture_on_commit_callbacks(execute=True):
        wallet_admin_credit(merchant=alice.merchant, amount=Decimal("12.34"), reason="test")
    assert value(scrape(api), moved, kind) - before == pytest.approx(12.34)


def test_the_wallet_check_is_exported_from_its_last_run(
    api, metrics_token, alice_funded, clock_advance
):
    problems = "trading_wallet_check_problems"
    samples = scrape(api)
    assert value(samples, "trading_wallet_check_age_seconds") == math.inf  # never run
    assert {labels for name, labels in samples if name == problems} == {
        frozenset({("invariant", invariant)}) for invariant in INVARIANTS
    }
    assert value(samples, problems) == 0

    call_command("check_wallet", stdout=io.StringIO())
    clock_advance(90)
    samples = scrape(api)
    assert 90 <= value(samples, "trading_wallet_check_age_seconds") < 150
    assert value(samples, problems) == 0

    # A balance moved behind the ledger's back: the next run finds it, and the metric says so.
    Account.objects.filter(merchant=alice_funded.merchant, kind=Account.Kind.AVAILABLE).update(
        balance=F("balance") + 1
    )
    with pytest.raises(CommandError, match="wallet invariants broken"):
        call_command("check_wallet", stdout=io.StringIO(), stderr=io.StringIO())
    samples = scrape(api)
    assert value(samples, problems, {"invariant": "drifted_accounts"}) == 1
    assert value(samples, problems) == 1
    assert value(samples, "trading_wallet_check_age_seconds") < 60
