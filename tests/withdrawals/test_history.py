"""Trade history (contract 4.9, 4.10, 4.14; decisions 6): the merchant's self trades, lookups by
id or externalId, and each client's own trades, with keyset pages newest first."""

import base64
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.factories import Actor, assert_error, platform_id, trade_url
from tests.withdrawals.conftest import (
    Desk,
    client_headers,
    make_listing,
    make_rust_listing,
    ok_data,
)
from trading.models import CatalogItem, Trade

pytestmark = pytest.mark.django_db


def stored_trade(actor: Actor, created_at, **fields) -> Trade:
    """A trade row as the history reads it (the page logic does not care how it got there)."""
    values = {
        "merchant": actor.merchant,
        "type": "withdraw",
        "source": "self",
        "status": "completed",
        "game": 730,
        "client_platform_id": platform_id(42),
        "client_trade_url": trade_url(42),
        "total_price": Decimal("1.00"),
        "created_at": created_at,
        "updated_at": created_at,
        **fields,
    }
    return Trade.objects.create(**values)


def walk(desk: Desk, path: str, headers: dict[str, str], **params) -> list[list[dict]]:
    """Every page of a list, following nextCursor to its end."""
    pages: list[list[dict]] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        data = ok_data(desk.get(path, headers=headers, params=query))
        pages.append(data["items"])
        cursor = data["nextCursor"]
        if cursor is None:
            return pages
        assert len(pages) < 50, "the cursor does not end"


def buy(desk: Desk, actor: Actor, item: CatalogItem, price: str = "1.00", **extra) -> dict:
    listing = make_listing(item, price)
    gross = (Decimal(price) * (1 + actor.merchant.withdraw_fee_rate)).quantize(
        Decimal("0.01"), "ROUND_CEILING"
    )
    body = {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": gross}], **extra}
    return ok_data(desk.post("/secure/buy", body, headers=actor.headers))


def withdraw(
    desk: Desk, headers: dict[str, str], item: CatalogItem, price: str = "1.05", **extra
) -> dict:
    """A client withdrawal of a fresh 1.00 listing (``price``: the merchant's gross for it)."""
    listing = make_listing(item, "1.00")
    body = {"items": [{"itemId": listing.id, "price": Decimal(price)}], **extra}
    return ok_data(desk.post("/client/trading/withdraw", body, headers=headers))


@pytest.fixture
def many(alice_funded) -> list[Trade]:
    """45 self trades, three to each creation time (ties are broken by id), newest first."""
    start = timezone.now() - timedelta(days=1)
    trades = [
        stored_trade(alice_funded, start + timedelta(seconds=n // 3), external_id=f"t-{n}")
        for n in range(45)
    ]
    return sorted(trades, key=lambda t: (t.created_at, t.id), reverse=True)


# --- GET /secure/trades ----------------------------------------------------------------------


def test_the_cursor_walks_every_trade_once_newest_first(desk, alice_funded, many):
    pages = walk(desk, "/secure/trades", alice_funded.headers, limit=20)
    assert [len(page) for page in pages] == [20, 20, 5]
    ids = [trade["id"] for page in pages for trade in page]
    assert ids == [str(trade.id) for trade in many]
    assert len(set(ids)) == 45


def test_the_default_page_is_20(desk, alice_funded, many):
    data = ok_data(desk.get("/secure/trades", headers=alice_funded.headers))
    assert len(data["items"]) == 20
    assert data["nextCursor"]


@pytest.mark.parametrize(("limit", "pages"), [(1, 45), (44, 2), (45, 1), (100, 1)])
def test_every_limit_from_1_to_100_walks_all(desk, alice_funded, many, limit, pages):
    walked = walk(desk, "/secure/trades", alice_funded.headers, limit=limit)
    assert len(walked) == pages
    assert [t["id"] for page in walked for t in page] == [str(t.id) for t in many]


@pytest.mark.parametrize("limit", [0, 101, -1, "ten"])
def test_a_limit_out_of_1_to_100_is_refused(desk, alice_funded, limit):
    error = assert_error(
        desk.get("/secure/trades", headers=alice_funded.headers, params={"limit": limit}),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert "limit" in error["fields"]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor!",
        _b64(b"hello"),
        _b64(b"2026-01-01T00:00:00+00:00|not-a-uuid"),
        _b64(b"yesterday|" + str(uuid.uuid4()).encode()),
        _b64(b"a|b|c"),
        _b64(b"\xff\xfe\xfd"),
        "x" * 201,
    ],
)
def test_a_tampered_cursor_is_refused(desk, alice_funded, many, cursor):
    error = assert_error(
        desk.get("/secure/trades", headers=alice_funded.headers, params={"cursor": cursor}),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert "cursor" in error["fields"]


def test_a_cursor_from_one_list_does_not_leak_into_another_merchants(
    desk, alice_funded, bob_funded, many
):
    cursor = ok_data(desk.get("/secure/trades", headers=alice_funded.headers))["nextCursor"]
    data = ok_data(
        desk.get("/secure/trades", headers=bob_funded.headers, params={"cursor": cursor})
    )
    assert data == {"items": [], "nextCursor": None}


def test_only_self_trades_of_the_caller_are_listed(desk, alice_funded, bob_funded, catalog_item):
    mine = buy(desk, alice_funded, catalog_item, externalId="mine")
    withdraw(desk, client_headers(desk.api, alice_funded), catalog_item)
    buy(desk, bob_funded, catalog_item)
    data = ok_data(desk.get("/secure/trades", headers=alice_funded.headers))
    assert [trade["id"] for trade in data["items"]] == [mine["id"]]
    assert data["nextCursor"] is None
    listed = data["items"][0]
    assert listed["source"] == "self"
    assert listed["externalId"] == "mine"
    assert listed["status"] == "pending"
    assert listed["items"][0]["marketHashName"] == catalog_item.market_hash_name


def test_type_and_game_filters(desk, alice_funded, catalog_item, rust_item):
    now = timezone.now()
    withdrawal = stored_trade(alice_funded, now)
    deposit = stored_trade(alice_funded, now - timedelta(minutes=1), type="deposit")
    rust = stored_trade(alice_funded, now - timedelta(minutes=2), game=252490)
    headers = alice_funded.headers

    def listed(**params) -> list[str]:
        return [
            t["id"]
            for t in ok_data(desk.get("/secure/trades", headers=headers, params=params))["items"]
        ]

    assert listed() == [str(withdrawal.id), str(deposit.id)]  # game defaults to 730
    assert listed(game="730") == [str(withdrawal.id), str(deposit.id)]
    assert listed(type="withdraw") == [str(withdrawal.id)]
    assert listed(type="deposit") == [str(deposit.id)]
    assert listed(game="252490") == [str(rust.id)]
    assert listed(game="252490", type="deposit") == []
    for bad in ({"type": "sell"}, {"game": "570"}):
        assert_error(
            desk.get("/secure/trades", headers=headers, params=bad), 400, 1001, "VALIDATION_FAILED"
        )


def test_a_real_second_game_buy_is_listed_under_its_game(desk, alice_funded, rust_item):
    listing = make_rust_listing(rust_item, "2.00")
    created = ok_data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(42),
                "items": [{"itemId": listing.id, "price": Decimal("2.10")}],
                "game": "252490",
            },
            headers=alice_funded.headers,
        )
    )
    headers = alice_funded.headers
    assert ok_data(desk.get("/secure/trades", headers=headers))["items"] == []
    rust = ok_data(desk.get("/secure/trades", headers=headers, params={"game": "252490"}))
    assert [t["id"] for t in rust["items"]] == [created["id"]]


# --- GET /secure/trades/{tradeId} ------------------------------------------------------------


def test_a_trade_is_found_by_id_and_by_external_id(desk, alice_funded, catalog_item):
    created = buy(desk, alice_funded, catalog_item, externalId="order-77")
    by_id = ok_data(desk.get(f"/secure/trades/{created['id']}", headers=alice_funded.headers))
    by_ext = ok_data(desk.get("/secure/trades/order-77", headers=alice_funded.headers))
    assert by_id == by_ext
    assert by_id["id"] == created["id"]
    assert by_id["externalId"] == "order-77"
    assert by_id["totalPrice"] == Decimal("1.05")
    listed = ok_data(desk.get("/secure/trades", headers=alice_funded.headers))["items"][0]
    assert listed == by_id


def test_a_client_trade_or_another_merchants_counts_as_missing(
    desk, alice_funded, bob_funded, catalog_item
):
    client_trade = withdraw(
        desk, client_headers(desk.api, alice_funded), catalog_item, externalId="client-1"
    )
    bobs = buy(desk, bob_funded, catalog_item, externalId="bob-1")
    for ref in (client_trade["id"], "client-1", bobs["id"], "bob-1", str(uuid.uuid4()), "nope"):
        assert_error(
            desk.get(f"/secure/trades/{ref}", headers=alice_funded.headers),
            404,
            21,
            "TRADE_NOT_FOUND",
        )


def test_a_list_of_refs_returns_the_resolved_ones_in_order(
    desk, alice_funded, bob_funded, catalog_item
):
    first = buy(desk, alice_funded, catalog_item, externalId="a-1")
    second = buy(desk, alice_funded, catalog_item, externalId="a-2")
    client_trade = withdraw(desk, client_headers(desk.api, alice_funded), catalog_item)
    bobs = buy(desk, bob_funded, catalog_item)
    refs = ["a-2", str(uuid.uuid4()), first["id"], client_trade["id"], bobs["id"], "a-2", "zzz"]
    data = ok_data(desk.get(f"/secure/trades/{','.join(refs)}", headers=alice_funded.headers))
    assert isinstance(data, list)
    assert [t["id"] for t in data] == [second["id"], first["id"]]
    assert data[0]["externalId"] == "a-2"
    # Nothing resolved: an empty list, not a 404.
    none = ok_data(desk.get(f"/secure/trades/{uuid.uuid4()},nope", headers=alice_funded.headers))
    assert none == []


def test_up_to_100_refs_and_no_more(desk, alice_funded, catalog_item):
    created = buy(desk, alice_funded, catalog_item)
    hundred = [created["id"]] + [str(uuid.uuid4()) for _ in range(99)]
    data = ok_data(desk.get(f"/secure/trades/{','.join(hundred)}", headers=alice_funded.headers))
    assert [t["id"] for t in data] == [created["id"]]
    error = assert_error(
        desk.get(
            f"/secure/trades/{','.join([*hundred, 'one-more'])}", headers=alice_funded.headers
        ),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert error["fields"]


# --- GET /client/trades and /client/trades/{id} ----------------------------------------------


@pytest.fixture
def clients(desk, alice_funded, bob_funded, catalog_item):
    """alice's clients behind partners 1 and 2, bob's client behind partner 1 (the same platform
    account at another merchant), and an alice self buy delivered to partner 1's account."""
    a1 = client_headers(desk.api, alice_funded, partner=1)
    a2 = client_headers(desk.api, alice_funded, partner=2)
    b1 = client_headers(desk.api, bob_funded, partner=1)
    trades = {
        "a1-old": withdraw(desk, a1, catalog_item, externalId="shared-ext"),
        "a2": withdraw(desk, a2, catalog_item, externalId="a2-ext"),
        "a1-new": withdraw(desk, a1, catalog_item, externalId="a1-ext"),
        "b1": withdraw(desk, b1, catalog_item, "1.10", externalId="shared-ext"),
    }
    listing = make_listing(catalog_item, "1.00")
    trades["self-to-a1"] = ok_data(
        desk.post(
            "/secure/buy",
            {"tradeUrl": trade_url(1), "items": [{"itemId": listing.id, "price": 1.05}]},
            headers=alice_funded.headers,
        )
    )
    return {"a1": a1, "a2": a2, "b1": b1}, trades


def test_a_client_lists_only_its_own_trades_newest_first(desk, clients):
    headers, trades = clients
    mine = ok_data(desk.get("/client/trades", headers=headers["a1"]))
    assert [t["id"] for t in mine["items"]] == [trades["a1-new"]["id"], trades["a1-old"]["id"]]
    assert mine["nextCursor"] is None
    assert {t["source"] for t in mine["items"]} == {"client"}
    assert {t["clientPlatformID"] for t in mine["items"]} == {platform_id(1)}
    other = ok_data(desk.get("/client/trades", headers=headers["a2"]))
    assert [t["id"] for t in other["items"]] == [trades["a2"]["id"]]
    bobs = ok_data(desk.get("/client/trades", headers=headers["b1"]))
    assert [t["id"] for t in bobs["items"]] == [trades["b1"]["id"]]


def test_client_pages_and_filters(desk, clients):
    headers, trades = clients
    pages = walk(desk, "/client/trades", headers["a1"], limit=1)
    assert [[t["id"] for t in page] for page in pages] == [
        [trades["a1-new"]["id"]],
        [trades["a1-old"]["id"]],
    ]
    by_type = ok_data(desk.get("/client/trades", headers=headers["a1"], params={"type": "deposit"}))
    assert by_type["items"] == []
    by_game = ok_data(desk.get("/client/trades", headers=headers["a1"], params={"game": "252490"}))
    assert by_game["items"] == []
    for bad in ({"limit": 0}, {"limit": 101}, {"cursor": "garbage!"}, {"type": "x"}):
        assert_error(
            desk.get("/client/trades", headers=headers["a1"], params=bad),
            400,
            1001,
            "VALIDATION_FAILED",
        )


def test_a_client_reads_its_trade_by_id_or_external_id(desk, clients):
    headers, trades = clients
    by_id = ok_data(desk.get(f"/client/trades/{trades['a1-new']['id']}", headers=headers["a1"]))
    by_ext = ok_data(desk.get("/client/trades/a1-ext", headers=headers["a1"]))
    assert by_id == by_ext
    assert by_id["id"] == trades["a1-new"]["id"]
    # The same externalId at two merchants: each client gets its own merchant's trade.
    assert (
        ok_data(desk.get("/client/trades/shared-ext", headers=headers["a1"]))["id"]
        == (trades["a1-old"]["id"])
    )
    assert (
        ok_data(desk.get("/client/trades/shared-ext", headers=headers["b1"]))["id"]
        == (trades["b1"]["id"])
    )


def test_a_client_cannot_read_anyone_elses_trade(desk, clients):
    headers, trades = clients
    cases = [
        ("a1", trades["a2"]["id"]),
        ("a1", "a2-ext"),
        ("a1", trades["b1"]["id"]),
        ("a1", trades["self-to-a1"]["id"]),  # a self buy to this very account
        ("a2", trades["a1-new"]["id"]),
        ("b1", trades["a1-new"]["id"]),
        ("b1", "a1-ext"),
        ("a1", str(uuid.uuid4())),
    ]
    for who, ref in cases:
        assert_error(
            desk.get(f"/client/trades/{ref}", headers=headers[who]), 404, 21, "TRADE_NOT_FOUND"
        )


def test_the_client_history_needs_a_client_token(desk, alice_funded):
    response = desk.get("/client/trades", headers=alice_funded.headers)
    assert response.status_code == 401
