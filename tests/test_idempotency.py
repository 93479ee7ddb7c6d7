"""Idempotency-Key on POST, through real HTTP (pytest-django's live server, one thread per
request) on PostgreSQL: the first answer replayed to retries of the same request, refused for
another, 409 while the first still runs, parallel retries executed once, keys per merchant and per
client, the key's own rule, and what the keys table keeps."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pytest
import requests

from core import clock
from core.json import dumps
from merchants.models import IdempotentRequest, Merchant
from merchants.services import (
    IdempotencyClaim,
    idempotent_request_claim,
    idempotent_requests_prune,
)
from merchants.tasks import prune_idempotent_requests
from tests.factories import Actor, auth_body, make_actor, trade_url
from tests.withdrawals.conftest import make_listing
from trading.models import CatalogItem, Trade
from wallet.selectors import wallet_balances
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "5f0c8a52-2a4e-4d8f-9a39-0b1c2d3e4f50"
THREADS = 8


@pytest.fixture
def item(transactional_db: None) -> CatalogItem:
    return CatalogItem.objects.create(
        id="730-000001",
        game=730,
        market_hash_name="AK-47 | Redline (Field-Tested)",
        name="AK-47 | Redline",
        item_type="Rifle",
        rarity="Classified",
        rarity_color="d32ce6",
        exterior="Field-Tested",
        icon_url="https://cdn.sandbox.invalid/a.png",
        reference_price=Decimal("40.00"),
    )


def merchant(name: str, usd: str = "1000.00") -> Actor:
    actor = make_actor(name=name)
    # Approval webhooks go nowhere here: the tests look at what the buy itself did.
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url="http://127.0.0.1:9/")
    actor.merchant.refresh_from_db()
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal(usd), reason="test")
    return actor


@pytest.fixture
def alice(transactional_db: None) -> Actor:
    return merchant("Alice")


@pytest.fixture
def bob(transactional_db: None) -> Actor:
    return merchant("Bob")


class Api:
    """The API at the live server's address, bodies as JSON with Decimals verbatim."""

    def __init__(self, base: str) -> None:
        self.base = base

    def post(
        self,
        path: str,
        body: Any,
        headers: dict[str, str],
        key: str | None = None,
        session: Any = requests,
    ) -> requests.Response:
        sent = {"Content-Type": "application/json", **headers}
        if key is not None:
            sent["Idempotency-Key"] = key
        return session.post(self.base + path, data=dumps(body), headers=sent, timeout=30)


@pytest.fixture
def api(live_server: Any) -> Api:
    return Api(live_server.url)


def buy_body(item: CatalogItem, price: str = "10.00", partner: int = 42) -> dict[str, Any]:
    listing = make_listing(item, price)
    line = {"itemId": listing.id, "price": Decimal(price)}
    # The listing's price before the merchant's fee (5 % or 10 %), bought at the price with it.
    return {"tradeUrl": trade_url(partner), "items": [line], "slippageBps": 1000}


def locked(actor: Actor) -> Decimal:
    return wallet_balances(merchant=actor.merchant)["locked"]


def trades(actor: Actor) -> int:
    return Trade.objects.filter(merchant=actor.merchant).count()


def error_key(response: requests.Response) -> str:
    return str(response.json()["error"]["key"])


def test_a_retry_gets_the_first_answer_replayed_and_runs_nothing_again(api, alice, item):
    body = buy_body(item)
    first = api.post("/secure/buy", body, alice.headers, KEY)
    again = api.post("/secure/buy", body, alice.headers, KEY)

    assert first.status_code == 200, first.text
    assert "Idempotent-Replayed" not in first.headers
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["Original-Request"] == first.json()["requestId"]
    # The same answer, under the retry's own requestId (as every envelope: its X-Request-Id).
    assert again.json()["data"] == first.json()["data"]
    assert again.json()["requestId"] == again.headers["X-Request-Id"] != first.json()["requestId"]
    assert trades(alice) == 1
    assert locked(alice) == Decimal("10.50")  # the price and alice's 5 % fee, once


def test_the_same_json_in_another_order_and_spacing_is_the_same_request(api, alice, item):
    body = buy_body(item)
    first = api.post("/secure/buy", body, alice.headers, KEY)
    reordered = (
        b'{ "items": [ {"price": 10.00, "itemId": "'
        + body["items"][0]["itemId"].encode()
        + b'"} ],'
        b' "tradeUrl": "' + body["tradeUrl"].encode() + b'",   "slippageBps": 1000 }'
    )
    again = requests.post(
        api.base + "/secure/buy",
        data=reordered,
        headers={**alice.headers, "Content-Type": "application/json", "Idempotency-Key": KEY},
        timeout=30,
    )

    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["data"] == first.json()["data"]
    assert trades(alice) == 1


def test_without_a_key_every_post_runs(api, alice, item):
    body = buy_body(item, partner=43)
    body["items"].append({"itemId": make_listing(item, "10.00").id, "price": Decimal("10.00")})
    api.post("/secure/buy", {**body, "items": body["items"][:1]}, alice.headers)
    api.post("/secure/buy", {**body, "items": body["items"][1:]}, alice.headers)

    assert trades(alice) == 2


def test_the_key_with_another_body_or_endpoint_is_refused(api, alice, item):
    body = buy_body(item)
    first = api.post("/secure/buy", body, alice.headers, KEY)
    other_body = api.post("/secure/buy", {**body, "externalId": "x"}, alice.headers, KEY)
    other_endpoint = api.post("/auth/authenticate-client", auth_body(1), alice.headers, KEY)

    assert first.status_code == 200
    for refused in (other_body, other_endpoint):
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == 1016
        assert error_key(refused) == "IDEMPOTENCY_KEY_REUSED"
        assert "Idempotent-Replayed" not in refused.headers
    assert trades(alice) == 1
    # The first request is still replayed to its own retries.
    assert api.post("/secure/buy", body, alice.headers, KEY).headers["Idempotent-Replayed"]


def test_an_error_answer_is_kept_and_replayed_too(api, alice, item):
    """As Stripe: the first answer, success or error, even once the cause is gone."""
    body = buy_body(item, price="2000.00")
    first = api.post("/secure/buy", body, alice.headers, KEY)
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("5000"), reason="test")
    again = api.post("/secure/buy", body, alice.headers, KEY)
    fresh = api.post("/secure/buy", body, alice.headers, "another-key")

    assert (first.status_code, error_key(first)) == (400, "MERCHANT_BALANCE_LOW")
    assert (again.status_code, error_key(again)) == (400, "MERCHANT_BALANCE_LOW")
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["error"] == first.json()["error"]
    assert fresh.status_code == 200, fresh.text
    assert trades(alice) == 1


def test_a_validation_failure_is_not_kept_so_the_fixed_body_runs_under_the_key(api, alice, item):
    """As Stripe: a request refused for its parameters began no work; fix it, keep the key."""
    body = buy_body(item)
    line = {**body["items"][0], "price": "ten"}
    broken = api.post("/secure/buy", {**body, "items": [line]}, alice.headers, KEY)
    fixed = api.post("/secure/buy", body, alice.headers, KEY)

    assert (broken.status_code, error_key(broken)) == (400, "VALIDATION_FAILED")
    assert fixed.status_code == 200, fixed.text
    assert "Idempotent-Replayed" not in fixed.headers
    assert trades(alice) == 1


def test_a_request_still_running_answers_409_and_a_dead_ones_key_is_taken_over(
    api, alice, item, real_clock_advance
):
    body = buy_body(item)
    held = hold_buy(api, alice, body)  # it runs, or its process died

    busy = api.post("/secure/buy", body, alice.headers, KEY)
    assert (busy.status_code, error_key(busy)) == (409, "IDEMPOTENCY_KEY_IN_USE")
    assert busy.json()["error"]["code"] == 1015
    assert 1 <= int(busy.headers["Retry-After"]) <= 60
    assert trades(alice) == 0

    real_clock_advance(61)  # its lease ends: the process that held it is taken for dead
    taken = api.post("/secure/buy", body, alice.headers, KEY)
    assert taken.status_code == 200, taken.text
    assert "Idempotent-Replayed" not in taken.headers
    assert trades(alice) == 1
    row = IdempotentRequest.objects.get(merchant=alice.merchant, key=KEY)
    assert row.claim != held.claim
    assert row.status_code == 200


def hold_buy(api: Api, actor: Actor, body: dict[str, Any]) -> IdempotencyClaim:
    """Another request holds KEY for this buy (claimed, no answer yet)."""
    running = requests.Request(
        "POST",
        api.base + "/secure/buy",
        data=dumps(body),
        headers={"Content-Type": "application/json", "Idempotency-Key": KEY},
    )
    return hold_key(actor, KEY, running)


def hold_key(actor: Actor, key: str, request: requests.Request) -> IdempotencyClaim:
    """The key claimed as the live server would claim it for ``request``."""
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from core.api.idempotency import request_fingerprint
    from core.api.rendering import DecimalJSONParser

    prepared = request.prepare()
    raw = APIRequestFactory().post(
        prepared.path_url, prepared.body, content_type="application/json"
    )
    parsed = Request(raw, parsers=[DecimalJSONParser()])
    claim = idempotent_request_claim(
        merchant=actor.merchant,
        caller="",
        key=key,
        fingerprint=request_fingerprint(parsed),
        request_id="held-by-another-request",
    )
    assert isinstance(claim, IdempotencyClaim)
    return claim


def burst(calls: list[Callable[[requests.Session], requests.Response]]) -> list[requests.Response]:
    """All calls at once: each thread waits at a barrier, then sends its request."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[requests.Session], requests.Response]) -> requests.Response:
        with requests.Session() as session:
            barrier.wait()
            return call(session)

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def test_parallel_retries_run_the_request_once(api, alice, item):
    body = buy_body(item)
    answers = burst(
        [lambda s: api.post("/secure/buy", body, alice.headers, KEY, session=s)] * THREADS
    )

    statuses = sorted(a.status_code for a in answers)
    assert set(statuses) <= {200, 409}, [a.text for a in answers]
    ran = [a for a in answers if a.status_code == 200 and "Idempotent-Replayed" not in a.headers]
    assert len(ran) == 1
    for other in answers:
        if other.status_code == 409:
            assert error_key(other) == "IDEMPOTENCY_KEY_IN_USE"
        else:
            assert other.json()["data"] == ran[0].json()["data"]
    assert trades(alice) == 1
    assert locked(alice) == Decimal("10.50")
    # Once it is answered, every retry gets that answer.
    late = api.post("/secure/buy", body, alice.headers, KEY)
    assert late.headers["Idempotent-Replayed"] == "true"
    assert late.json()["data"] == ran[0].json()["data"]


def test_two_merchants_use_the_same_key_independently(api, alice, bob, item):
    alice_first = api.post("/secure/buy", buy_body(item), alice.headers, KEY)
    bob_body = buy_body(item, price="12.00")  # another body: no conflict across merchants
    bob_first = api.post("/secure/buy", bob_body, bob.headers, KEY)
    bob_again = api.post("/secure/buy", bob_body, bob.headers, KEY)

    assert alice_first.status_code == bob_first.status_code == 200
    assert "Idempotent-Replayed" not in bob_first.headers
    assert bob_again.json()["data"] == bob_first.json()["data"]
    assert bob_first.json()["data"]["id"] != alice_first.json()["data"]["id"]
    assert (trades(alice), trades(bob)) == (1, 1)
    assert locked(bob) == Decimal("12.60")  # 12.00 and the 5 % fee, once


def test_a_merchant_and_each_of_its_clients_have_keys_of_their_own(api, alice, item):
    tokens = []
    for partner in (1, 2):
        issued = api.post("/auth/authenticate-client", auth_body(partner), alice.headers)
        tokens.append({"Authorization": f"Bearer {issued.json()['data']['token']}"})
    merchant_buy = api.post("/secure/buy", buy_body(item), alice.headers, KEY)
    client_body = {"items": buy_body(item)["items"], "slippageBps": 1000}
    first_client = api.post("/client/trading/withdraw", client_body, tokens[0], KEY)
    second_body = {"items": buy_body(item)["items"], "slippageBps": 1000}
    second_client = api.post("/client/trading/withdraw", second_body, tokens[1], KEY)
    first_again = api.post("/client/trading/withdraw", client_body, tokens[0], KEY)

    for answer in (merchant_buy, first_client, second_client):
        assert answer.status_code == 200, answer.text
        assert "Idempotent-Replayed" not in answer.headers
    assert first_again.headers["Idempotent-Replayed"] == "true"
    assert first_again.json()["data"] == first_client.json()["data"]
    assert trades(alice) == 3


def test_a_replay_answers_the_same_client_token(api, alice):
    """A POST that answers differently each time (a fresh token) answers the first again."""
    first = api.post("/auth/authenticate-client", auth_body(1), alice.headers, KEY)
    again = api.post("/auth/authenticate-client", auth_body(1), alice.headers, KEY)

    assert again.json()["data"]["token"] == first.json()["data"]["token"]
    assert again.headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    "key",
    [
        "",
        "k" * 256,
        "two words",
        "tab\tinside",
        "caf\u00e9",
    ],
    ids=["empty", "too-long", "space", "control", "non-ascii"],
)
def test_a_key_outside_the_rule_is_refused_and_nothing_runs(api, alice, item, key):
    response = requests.post(
        api.base + "/secure/buy",
        data=dumps(buy_body(item)),
        headers={
            **alice.headers,
            "Content-Type": "application/json",
            "Idempotency-Key": key.encode().decode("latin-1"),
        },
        timeout=30,
    )

    assert (response.status_code, error_key(response)) == (400, "VALIDATION_FAILED")
    assert list(response.json()["error"]["fields"]) == ["Idempotency-Key"]
    assert trades(alice) == 0
    assert not IdempotentRequest.objects.exists()


def test_the_longest_key_and_any_visible_ascii_are_accepted(api, alice, item):
    for key in ("k" * 255, "order:42/retry=1+~!"):
        response = api.post("/secure/buy", buy_body(item, partner=44), alice.headers, key)
        assert response.status_code == 200, response.text


def test_a_key_is_kept_24_hours_then_the_same_request_runs_again(api, alice, real_clock_advance):
    first = api.post("/auth/authenticate-client", auth_body(1), alice.headers, KEY)
    real_clock_advance(24 * 3600 - 60)
    within = api.post("/auth/authenticate-client", auth_body(1), alice.headers, KEY)
    real_clock_advance(120)
    pruned = idempotent_requests_prune(now=clock.real_now())
    after = api.post("/auth/authenticate-client", auth_body(1), alice.headers, KEY)

    assert within.headers["Idempotent-Replayed"] == "true"
    assert within.json()["data"] == first.json()["data"]
    assert pruned == 1
    assert "Idempotent-Replayed" not in after.headers
    kept = IdempotentRequest.objects.get(merchant=alice.merchant, key=KEY)
    assert kept.request_id == after.json()["requestId"] != first.json()["requestId"]  # ran anew


def test_the_prune_task_deletes_only_expired_keys(api, alice, bob, item, real_clock_advance):
    api.post("/secure/buy", buy_body(item), alice.headers, "old")
    real_clock_advance(24 * 3600 + 1)
    api.post("/secure/buy", buy_body(item, partner=45), bob.headers, "new")

    assert prune_idempotent_requests() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["new"]


def test_another_merchant_moving_the_sandbox_clock_never_frees_a_key(api, alice, bob, item):
    """Issue 39's reproduction: bob moves the shared sandbox clock past the 24 hours a key is
    kept; alice's retry with the same key still gets her first trade, and is not charged again.
    Nor does the prune task forget her key."""
    body = buy_body(item)
    first = api.post("/secure/buy", body, alice.headers, KEY)
    assert first.status_code == 200, first.text
    charged = locked(alice)

    advanced = api.post("/sandbox/clock/advance", {"minutes": 1441}, bob.headers)
    assert advanced.status_code == 200, advanced.text
    pruned = prune_idempotent_requests()
    retry = api.post("/secure/buy", body, alice.headers, KEY)

    assert pruned == 0
    assert retry.status_code == 200, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json()["data"] == first.json()["data"]
    assert trades(alice) == 1
    assert locked(alice) == charged == Decimal("10.50")


def test_another_merchant_moving_the_sandbox_clock_never_ends_a_running_requests_lease(
    api, alice, bob, item
):
    body = buy_body(item)
    held = hold_buy(api, alice, body)

    advanced = api.post("/sandbox/clock/advance", {"minutes": 5}, bob.headers)
    assert advanced.status_code == 200, advanced.text
    retry = api.post("/secure/buy", body, alice.headers, KEY)

    assert (retry.status_code, error_key(retry)) == (409, "IDEMPOTENCY_KEY_IN_USE")
    assert 1 <= int(retry.headers["Retry-After"]) <= 60
    assert trades(alice) == 0
    assert IdempotentRequest.objects.get(merchant=alice.merchant, key=KEY).claim == held.claim


def test_a_body_with_integers_beyond_64_bits_is_refused_not_a_500(api, alice):
    """The key's fingerprint writes the body as canonical JSON, which orjson refused for an
    integer over 64 bits (found by schemathesis: a 500 before the body was validated)."""
    wide = {**auth_body(1), "clientData": {"totalWager": 10**40, "kycLevel": -(10**30)}}
    headers = {**alice.headers, "Content-Type": "application/json"}
    sent = [
        requests.post(
            api.base + "/auth/authenticate-client",
            data=b'{"clientPlatformId": "%s", "clientTradeUrl": "%s", "clientData": '
            b'{"totalWager": 10000000000000000000000000000000000000000, "kycLevel": -1}}'
            % (wide["clientPlatformId"].encode(), wide["clientTradeUrl"].encode()),
            headers={**headers, "Idempotency-Key": key},
            timeout=30,
        )
        for key in ("wide-1", "wide-1")
    ]

    assert [response.status_code for response in sent] == [400, 400]
    assert [error_key(response) for response in sent] == ["VALIDATION_FAILED"] * 2
