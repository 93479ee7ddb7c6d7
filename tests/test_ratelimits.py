"""Rate limits: the registry against the contract's section 8, the HTTP behaviour on
POST /auth/authenticate-client, and exact counting across processes (Redis) and threads (the
database fallback).

Windows are fixed (per minute, hour, 5 minutes). Tests that count to a limit freeze the clock the
rate limiter reads (``merchants.ratelimits.time``) in the middle of a window, so a window rolling
over mid-test cannot change a count.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
import types
import uuid

import pytest
from django.db import connection
from django.urls import Resolver404, resolve

from config import openapi
from core.api.routes import routed_views
from core.metrics import RATE_LIMIT_REFUSALS
from merchants import ratelimits
from merchants.models import RateLimitWindow
from merchants.ratelimits import (
    CLIENT_TRADE,
    HOUR,
    MINUTE,
    DatabaseWindowCounter,
    Limited,
    Rate,
    Rates,
    rate_limit_hit,
    rate_limit_windows_prune,
)
from tests.factories import make_actor, platform_id, trade_url

AUTHENTICATE = "/auth/authenticate-client"

# The contract's section 8 table: one line per budget, with the operations that spend it.
# Operations on one line share one counter; every line has its own.
CONTRACT_LINES: list[tuple[str, tuple[str, ...], Rate, Rate]] = [
    (
        "POST /auth/authenticate-client",
        ("auth.authenticate_client",),
        Rate(1_000_000, HOUR),
        Rate(100, HOUR),
    ),
    (
        "POST /secure/check-tradeurl",
        ("secure.check_tradeurl",),
        Rate(100_000, HOUR),
        Rate(100, HOUR),
    ),
    ("GET /secure/prices", ("secure.prices",), Rate(1_000, HOUR), Rate(100, HOUR)),
    ("GET /secure/inventory", ("secure.inventory",), Rate(10_000, MINUTE), Rate(100, MINUTE)),
    ("POST /secure/sell", ("secure.sell",), Rate(5_000, MINUTE), Rate(50, MINUTE)),
    ("POST /secure/buy", ("secure.buy",), Rate(5_000, MINUTE), Rate(50, MINUTE)),
    (
        "POST /secure/buy/{tradeId}/cancel",
        ("secure.buy.cancel",),
        Rate(60, MINUTE),
        Rate(10, MINUTE),
    ),
    ("GET /secure/market", ("secure.market",), Rate(3_000, MINUTE), Rate(100, MINUTE)),
    ("GET /secure/market/item", ("secure.market.item",), Rate(6_000, MINUTE), Rate(100, MINUTE)),
    (
        "GET /secure/trades and /secure/trades/{tradeId}",
        ("secure.trades.list", "secure.trades.get"),
        Rate(3_000, MINUTE),
        Rate(100, MINUTE),
    ),
    (
        "GET /secure/crypto/deposits, GET /client/crypto/deposit-address",
        ("secure.crypto.deposits", "client.crypto.deposit_address"),
        Rate(1_000, MINUTE),
        Rate(10, MINUTE),
    ),
    (
        "GET /v1/ledger/transactions",
        ("ledger.transactions",),
        Rate(100, 5 * MINUTE),
        Rate(10, MINUTE),
    ),
    ("GET /client/inventory", ("client.inventory",), Rate(1_000, MINUTE), Rate(10, MINUTE)),
    ("GET /client/market", ("client.market",), Rate(300, MINUTE), Rate(30, MINUTE)),
    (
        "GET /client/market/suggestions",
        ("client.market.suggestions",),
        Rate(600, MINUTE),
        Rate(30, MINUTE),
    ),
    ("GET /client/market/item", ("client.market.item",), Rate(600, MINUTE), Rate(30, MINUTE)),
    ("GET /client/trades", ("client.trades.list",), Rate(3_000, MINUTE), Rate(30, MINUTE)),
    (
        "POST /client/trading/deposit",
        ("client.trading.deposit",),
        Rate(500, MINUTE),
        Rate(5, MINUTE),
    ),
    (
        "POST /client/trading/withdraw and /withdraw/quick",
        ("client.trading.withdraw", "client.trading.withdraw.quick"),
        Rate(500, MINUTE),
        Rate(5, MINUTE),
    ),
]

# Endpoints of the contract's table and the line whose budget they must spend, checked for every
# endpoint that exists in the URLconf (so the check grows with the API).
CONTRACT_ENDPOINTS: list[tuple[str, str, str]] = [
    ("POST", "/auth/authenticate-client", "POST /auth/authenticate-client"),
    ("POST", "/secure/check-tradeurl", "POST /secure/check-tradeurl"),
    ("GET", "/secure/prices", "GET /secure/prices"),
    ("GET", "/secure/inventory", "GET /secure/inventory"),
    ("POST", "/secure/sell", "POST /secure/sell"),
    ("POST", "/secure/buy", "POST /secure/buy"),
    ("POST", "/secure/buy/trade-1/cancel", "POST /secure/buy/{tradeId}/cancel"),
    ("GET", "/secure/market", "GET /secure/market"),
    ("GET", "/secure/market/item", "GET /secure/market/item"),
    ("GET", "/secure/trades", "GET /secure/trades and /secure/trades/{tradeId}"),
    ("GET", "/secure/trades/trade-1", "GET /secure/trades and /secure/trades/{tradeId}"),
    (
        "GET",
        "/secure/crypto/deposits",
        "GET /secure/crypto/deposits, GET /client/crypto/deposit-address",
    ),
    (
        "GET",
        "/client/crypto/deposit-address",
        "GET /secure/crypto/deposits, GET /client/crypto/deposit-address",
    ),
    ("GET", "/v1/ledger/transactions", "GET /v1/ledger/transactions"),
    ("GET", "/client/inventory", "GET /client/inventory"),
    ("GET", "/client/market", "GET /client/market"),
    ("GET", "/client/market/suggestions", "GET /client/market/suggestions"),
    ("GET", "/client/market/item", "GET /client/market/item"),
    ("GET", "/client/trades", "GET /client/trades"),
    ("POST", "/client/trading/deposit", "POST /client/trading/deposit"),
    ("POST", "/client/trading/withdraw", "POST /client/trading/withdraw and /withdraw/quick"),
    ("POST", "/client/trading/withdraw/quick", "POST /client/trading/withdraw and /withdraw/quick"),
]

CLIENT_DEPOSIT = Limited("client.trading.deposit", CLIENT_TRADE)

LINES = {
    line: (operations, verified, unverified)
    for line, operations, verified, unverified in CONTRACT_LINES
}


def _slot_middle(window: int) -> float:
    """A moment in the middle of the current window: a whole test fits before it ends."""
    import time

    return (int(time.time()) // window) * window + window / 2


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch):
    """Freezes the clock the rate limiter reads (only it) at the middle of the current hour."""
    frozen = {"now": _slot_middle(HOUR)}
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: frozen["now"]))
    return frozen


def _body(partner: int = 1) -> dict[str, object]:
    return {"clientPlatformId": platform_id(partner), "clientTradeUrl": trade_url(partner)}


def _authenticate(api, actor):
    return api.post(AUTHENTICATE, _body(), format="json", headers=actor.headers)


# -- The budgets the views declare


def _by_operation() -> dict[str, set[Limited]]:
    """The budgets the routed views declare, by operation."""
    by_operation: dict[str, set[Limited]] = {}
    for _, view in routed_views():
        limited = getattr(view, "rate_limit", None)
        if isinstance(limited, Limited):
            by_operation.setdefault(limited.operation, set()).add(limited)
    return by_operation


DECLARED = {operation: min(budgets, key=repr) for operation, budgets in _by_operation().items()}


def test_views_naming_one_operation_declare_one_budget():
    assert {op: budgets for op, budgets in _by_operation().items() if len(budgets) > 1} == {}
    assert "auth.authenticate_client" in DECLARED


@pytest.mark.parametrize(
    ("line", "operations", "verified", "unverified"),
    CONTRACT_LINES,
    ids=[line for line, *_ in CONTRACT_LINES],
)
def test_views_declare_the_contract_budget_of_every_line(line, operations, verified, unverified):
    for operation in operations:
        budget = DECLARED[operation]
        assert budget.rate(verified=True) == verified, operation
        assert budget.rate(verified=False) == unverified, operation
    assert len({DECLARED[operation].bucket for operation in operations}) == 1, line


def test_each_contract_line_counts_in_its_own_bucket():
    buckets = [DECLARED[operations[0]].bucket for _, operations, _, _ in CONTRACT_LINES]
    assert len(buckets) == len(set(buckets))
    # Named in the contract as separate lines: not shared.
    assert DECLARED["secure.sell"].bucket != DECLARED["secure.buy"].bucket
    assert DECLARED["client.trading.deposit"].bucket != DECLARED["client.trading.withdraw"].bucket


def test_operations_sharing_a_bucket_share_the_same_rates():
    by_bucket: dict[str, set[Rates]] = {}
    for budget in [*DECLARED.values(), openapi.RATE_LIMIT]:
        by_bucket.setdefault(budget.bucket, set()).add(budget.rates)
    assert {bucket: rates for bucket, rates in by_bucket.items() if len(rates) > 1} == {}


def _view_budget(method: str, path: str) -> Limited | bool | None:
    """The rate-limit budget of the view behind ``method path``; False when there is none."""
    try:
        match = resolve(path)
    except Resolver404:
        return False
    view_class = getattr(match.func, "view_class", None) or getattr(match.func, "cls", None)
    if view_class is None or not hasattr(view_class, method.lower()):
        return False
    return view_class.rate_limit


def test_every_existing_contract_endpoint_spends_its_line_budget():
    checked = 0
    for method, path, line in CONTRACT_ENDPOINTS:
        budget = _view_budget(method, path)
        if budget is False:
            continue  # not built yet
        operations, verified, unverified = LINES[line]
        assert isinstance(budget, Limited), f"{method} {path} is not rate limited"
        assert budget.bucket == DECLARED[operations[0]].bucket, f"{method} {path}"
        assert budget.rates == Rates(verified, unverified), f"{method} {path}"
        checked += 1
    assert checked >= 1  # POST /auth/authenticate-client at least


# -- Through the HTTP API


@pytest.mark.django_db
def test_unverified_merchant_gets_100_an_hour_then_429(api, frozen_clock):
    actor = make_actor(name="Unverified", is_verified=False)
    refusals = RATE_LIMIT_REFUSALS.labels("auth.authenticate_client")
    refused_before = refusals._value.get()

    for n in range(1, 101):
        response = _authenticate(api, actor)
        assert response.status_code == 200, (n, response.json())
        assert response["X-RateLimit-Limit"] == "100"
        assert response["X-RateLimit-Remaining"] == str(100 - n)
        assert "Retry-After" not in response

    for _ in range(2):  # refused requests count too, and stay refused
        refused = _authenticate(api, actor)
        assert refused.status_code == 429
        body = refused.json()
        assert body["success"] is False
        assert body["error"]["code"] == 1005
        assert body["error"]["key"] == "RATE_LIMITED"
        assert refused["X-RateLimit-Limit"] == "100"
        assert refused["X-RateLimit-Remaining"] == "0"
        retry_after = refused["Retry-After"]
        assert retry_after.isdigit()
        assert 0 < int(retry_after) <= HOUR
        # The clock is frozen half-way through the hour.
        assert int(retry_after) == HOUR // 2
        assert refused["X-Request-Id"] == body["requestId"]
    assert refusals._value.get() - refused_before == 2  # in the metrics


@pytest.mark.django_db
def test_the_sandbox_clock_never_opens_a_new_window(api, frozen_clock, clock_advance):
    """Budgets count real time: another merchant moving the sandbox clock past the hour frees
    no request (docs/decisions.md, "Clocks")."""
    actor = make_actor(name="Unverified", is_verified=False)
    for _ in range(100):
        assert _authenticate(api, actor).status_code == 200

    clock_advance(2 * HOUR)

    refused = _authenticate(api, actor)
    assert refused.status_code == 429
    assert refused["Retry-After"] == str(HOUR // 2)


@pytest.mark.django_db
def test_retry_after_is_the_time_left_in_the_window(api, frozen_clock):
    actor = make_actor(name="Unverified", is_verified=False)
    slot_start = frozen_clock["now"] - HOUR / 2
    for _ in range(100):
        assert _authenticate(api, actor).status_code == 200

    frozen_clock["now"] = slot_start + HOUR - 0.25  # a quarter second before the window ends
    assert _authenticate(api, actor)["Retry-After"] == "1"
    frozen_clock["now"] = slot_start + 10.5
    assert _authenticate(api, actor)["Retry-After"] == str(HOUR - 10)

    frozen_clock["now"] = slot_start + HOUR  # the next window: a fresh budget
    response = _authenticate(api, actor)
    assert response.status_code == 200
    assert response["X-RateLimit-Remaining"] == "99"


@pytest.mark.django_db
def test_verified_merchant_has_a_million_an_hour(api, frozen_clock):
    actor = make_actor(name="Verified", is_verified=True)

    for n in range(1, 102):
        response = _authenticate(api, actor)
        assert response.status_code == 200
        assert response["X-RateLimit-Limit"] == "1000000"
        assert response["X-RateLimit-Remaining"] == str(1_000_000 - n)


@pytest.mark.django_db
def test_merchants_have_separate_budgets(api, frozen_clock):
    alice = make_actor(name="Alice", is_verified=False)
    bob = make_actor(name="Bob", is_verified=False)

    for _ in range(100):
        assert _authenticate(api, alice).status_code == 200
    assert _authenticate(api, alice).status_code == 429

    response = _authenticate(api, bob)
    assert response.status_code == 200
    assert response["X-RateLimit-Remaining"] == "99"
    assert _authenticate(api, alice).status_code == 429


@pytest.mark.django_db
def test_requests_refused_before_the_limiter_do_not_count(api, frozen_clock):
    actor = make_actor(name="Unverified", is_verified=False)

    unauthenticated = api.post(AUTHENTICATE, _body(), format="json")
    assert unauthenticated.status_code == 401
    assert "X-RateLimit-Limit" not in unauthenticated

    response = _authenticate(api, actor)
    assert response["X-RateLimit-Remaining"] == "99"


@pytest.mark.django_db
def test_invalid_bodies_spend_the_budget_and_carry_the_headers(api, frozen_clock):
    actor = make_actor(name="Unverified", is_verified=False)

    invalid = api.post(AUTHENTICATE, {"unknown": 1}, format="json", headers=actor.headers)
    assert invalid.status_code == 400
    assert invalid["X-RateLimit-Limit"] == "100"
    assert invalid["X-RateLimit-Remaining"] == "99"


# -- Counting: Redis across processes, the database across threads


def test_redis_counter_expires_its_window():
    merchant_id = str(uuid.uuid4())
    state = rate_limit_hit(merchant_id=merchant_id, verified=False, limited=CLIENT_DEPOSIT)
    counter = ratelimits._counter()
    assert isinstance(counter, ratelimits.RedisWindowCounter)

    keys = counter._client.keys(f"rl:client.trading.deposit:u:{merchant_id}:60:*")
    assert len(keys) == 1
    assert 0 < counter._client.ttl(keys[0]) <= MINUTE + 1
    assert state.hits == 1
    assert state.limit == 5


CHILD = textwrap.dedent(
    """
    import json, sys, types
    import django
    django.setup()
    from merchants import ratelimits
    frozen, merchant_id, hits = float(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    ratelimits.time = types.SimpleNamespace(time=lambda: frozen)
    ratelimits._counter()  # connect before the start signal
    print("ready", flush=True)
    sys.stdin.readline()
    seen = []
    for _ in range(hits):
        state = ratelimits.rate_limit_hit(
            merchant_id=merchant_id, verified=False, limited=ratelimits.Limited(
                "client.trading.deposit", ratelimits.CLIENT_TRADE
            )
        )
        seen.append([state.hits, state.allowed])
    print(json.dumps(seen), flush=True)
    """
)


def test_two_processes_share_one_budget():
    merchant_id = str(uuid.uuid4())
    frozen = _slot_middle(MINUTE)
    hits_each = 20
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    for name in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY"):
        assert env.get(name), name
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, repr(frozen), merchant_id, str(hits_each)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=os.getcwd(),
        )
        for _ in range(2)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready", child.stderr
        for child in children:  # both start together
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        results = []
        for child in children:
            out, err = child.communicate(timeout=60)
            assert child.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()

    every_hit = [hits for result in results for hits, _ in result]
    allowed = [hits for result in results for hits, ok in result if ok]
    # One atomic counter: each of the 40 requests saw a different count, and exactly 5 passed.
    assert sorted(every_hit) == list(range(1, 2 * hits_each + 1))
    assert sorted(allowed) == [1, 2, 3, 4, 5]


@pytest.mark.django_db(transaction=True)
def test_database_counter_counts_exactly_under_concurrent_threads(monkeypatch):
    database_counter = DatabaseWindowCounter()
    monkeypatch.setattr(ratelimits, "_counter", lambda: database_counter)
    frozen = _slot_middle(MINUTE)
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: frozen))
    merchant_id = str(uuid.uuid4())
    threads_count, hits_each = 8, 10
    results: list[tuple[int, bool]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads_count)

    def work() -> None:
        try:
            barrier.wait(timeout=30)
            for _ in range(hits_each):
                state = rate_limit_hit(
                    merchant_id=merchant_id, verified=False, limited=CLIENT_DEPOSIT
                )
                with lock:
                    results.append((state.hits, state.allowed))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    total = threads_count * hits_each
    assert sorted(hits for hits, _ in results) == list(range(1, total + 1))
    assert sum(1 for _, allowed in results if allowed) == 5
    window = RateLimitWindow.objects.get()
    assert window.hits == total
    assert window.key == f"client.trading.deposit:u:{merchant_id}:60"
    slot = int(frozen // MINUTE)
    assert window.slot == slot
    assert window.expires_at == (slot + 1) * MINUTE


@pytest.mark.django_db
def test_prune_deletes_ended_windows_only(monkeypatch):
    now = 1_900_000_000
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: now))
    ended = [
        RateLimitWindow.objects.create(key="a", slot=1, hits=3, expires_at=now - 3600),
        RateLimitWindow.objects.create(key="b", slot=2, hits=1, expires_at=now - 1),
    ]
    current = [
        RateLimitWindow.objects.create(key="a", slot=3, hits=2, expires_at=now + 1),
        RateLimitWindow.objects.create(key="c", slot=4, hits=9, expires_at=now + 300),
    ]

    assert rate_limit_windows_prune() == len(ended)

    assert set(RateLimitWindow.objects.values_list("pk", flat=True)) == {w.pk for w in current}
    assert rate_limit_windows_prune() == 0


@pytest.mark.django_db
def test_prune_task_runs_the_prune(monkeypatch):
    from merchants.tasks import prune_rate_limit_windows

    now = 1_900_000_000
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: now))
    RateLimitWindow.objects.create(key="a", slot=1, hits=3, expires_at=now - 60)

    assert prune_rate_limit_windows.apply().get() == 1
    assert not RateLimitWindow.objects.exists()


def test_the_gate_counts_a_window_whatever_its_count():
    """A count below zero is still a count: the gate's one round trip says "not counted" with a
    nil, and the request is not counted a second time (the benchmark sets its merchants' counters
    far below zero so that no request is refused)."""
    counter = ratelimits._counter()
    assert isinstance(counter, ratelimits.RedisWindowCounter)
    window = ratelimits.rate_limit_window(
        merchant_id=str(uuid.uuid4()), verified=True, limited=DECLARED["wallet.balance"]
    )
    counter._client.set(f"rl:{window.key}:{window.slot}", -(10**9), ex=MINUTE)
    epoch = ratelimits.auth_epoch_read()

    counted = ratelimits.shared_read(
        settings_key="s", market_version_key="m", expected_epoch=epoch, window=window
    )
    assert counted.hits == 1 - 10**9

    other_epoch = ratelimits.shared_read(
        settings_key="s", market_version_key="m", expected_epoch=epoch + "-old", window=window
    )
    assert other_epoch.hits is None
    no_window = ratelimits.shared_read(
        settings_key="s", market_version_key="m", expected_epoch=epoch, window=None
    )
    assert no_window.hits is None


@pytest.mark.django_db
def test_a_window_below_zero_counts_each_request_once(api, frozen_clock):
    actor = make_actor(name="Lifted", is_verified=True)
    assert _authenticate(api, actor).status_code == 200  # this process now keeps the caller
    window = ratelimits.rate_limit_window(
        merchant_id=str(actor.merchant.pk),
        verified=True,
        limited=DECLARED["auth.authenticate_client"],
    )
    counter = ratelimits._counter()
    assert isinstance(counter, ratelimits.RedisWindowCounter)
    key = f"rl:{window.key}:{window.slot}"
    counter._client.set(key, -10, ex=HOUR)

    for _ in range(2):
        assert _authenticate(api, actor).status_code == 200
    assert int(counter._client.get(key)) == -8
