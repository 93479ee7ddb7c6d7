"""The market version (core.market_version) in the per-request path (docs/decisions.md,
"Per-request path"): a merchant or client request reads it in the gate's one round trip and every
cached market read of that request uses it; a bump is seen by the very next request, and by the
rest of the request that made it; outside a request it is read from the cache every time."""

from decimal import Decimal

import pytest
import redis
from django.core.cache import cache

from core.context import end_request, start_request
from core.market_version import (
    MARKET_VERSION_KEY,
    market_version,
    market_version_bump,
    market_version_shared_key,
)
from merchants.gate import request_gate
from sandbox.models import SandboxListing
from tests.trading.helpers import Caller, caller, ok, prices

pytestmark = pytest.mark.django_db

D = Decimal
AK = "730-000100"
MARKET_READS = [
    ("/market", {"search": "AK", "sort": "priceAsc"}),
    ("/market/item", {"itemId": AK}),
]


def listed_prices(who: Caller, path: str, params: dict[str, str]) -> list[Decimal]:
    data = ok(who.get(path, params))
    return prices(data["items"] if path == "/market" else data)


@pytest.fixture
def redis_commands(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Every command sent to Redis from now on, with its arguments."""
    commands: list[tuple[str, ...]] = []
    send = redis.Redis.execute_command

    def counted(self, *args, **options):  # type: ignore[no-untyped-def]
        commands.append(tuple(str(arg) for arg in args))
        return send(self, *args, **options)

    monkeypatch.setattr(redis.Redis, "execute_command", counted)
    return commands


def another_process_bumps() -> None:
    """What a bump by another process leaves: a new version in the shared cache."""
    cache.set(MARKET_VERSION_KEY, "bumped-elsewhere", timeout=None)


@pytest.mark.parametrize(("path", "params"), MARKET_READS)
def test_a_cached_market_read_makes_the_gate_round_trip_and_the_page_read(
    as_alice: Caller, world, redis_commands, path, params
):
    ok(as_alice.get(path, params))  # caches the page (and the kept caller)
    redis_commands.clear()

    ok(as_alice.get(path, params))

    assert [command[0] for command in redis_commands] == ["EVALSHA", "GET"]
    assert market_version_shared_key() in redis_commands[0]  # read with the switches and epoch
    assert market_version_shared_key() not in redis_commands[1]


def test_a_price_book_uses_the_version_the_gate_read(api, alice, world, redis_commands):
    merchant = caller(api, alice, "secure")
    ok(merchant.get("/prices"))
    redis_commands.clear()

    ok(merchant.get("/prices"))

    assert [command[0] for command in redis_commands].count("EVALSHA") == 1
    assert [c for c in redis_commands[1:] if market_version_shared_key() in c] == []


@pytest.mark.parametrize(("path", "params"), MARKET_READS)
def test_a_bump_elsewhere_is_seen_by_the_very_next_request(as_alice: Caller, world, path, params):
    before = listed_prices(as_alice, path, params)
    SandboxListing.objects.filter(item_id=AK).update(price=D("1.00"))
    assert listed_prices(as_alice, path, params) == before  # the cached page

    another_process_bumps()

    assert set(listed_prices(as_alice, path, params)) == {D("1.05")}


def test_the_first_request_makes_a_version_the_next_one_reads_in_the_gate(
    as_alice: Caller, world, redis_commands
):
    path, params = MARKET_READS[0]
    ok(as_alice.get(path, params))
    cache.delete(MARKET_VERSION_KEY)  # as a Redis that lost it
    redis_commands.clear()

    ok(as_alice.get(path, params))
    made = cache.get(MARKET_VERSION_KEY)
    redis_commands.clear()
    ok(as_alice.get(path, params))

    assert made is not None
    assert [command[0] for command in redis_commands] == ["EVALSHA", "GET"]
    assert cache.get(MARKET_VERSION_KEY) == made


def test_a_request_that_bumps_reads_its_new_version():
    start_request()
    try:
        cache.set(MARKET_VERSION_KEY, "read-by-the-gate", timeout=None)
        request_gate(window=None)
        assert market_version() == "read-by-the-gate"
        another_process_bumps()
        assert market_version() == "read-by-the-gate"  # one version for the whole request
        market_version_bump()
        assert market_version() == cache.get(MARKET_VERSION_KEY) != "read-by-the-gate"
    finally:
        end_request()


def test_outside_a_request_every_read_is_the_cache_s():
    first = market_version()
    assert market_version() == first
    another_process_bumps()
    assert market_version() == "bumped-elsewhere"
