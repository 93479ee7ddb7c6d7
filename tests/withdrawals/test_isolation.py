"""Object-level authorization: another merchant's key, or another client's token, on every route
that takes a trade, item or event id answers "not found" and changes nothing. The trades are
old enough to cancel and their items can move, so a missing scope would show."""

from decimal import Decimal

import pytest

from merchants.webhooks.models import WebhookEvent
from sandbox.models import SandboxPurchase
from tests.factories import assert_error, trade_url
from tests.withdrawals.conftest import (
    advance_minutes,
    client_headers,
    make_listing,
    money,
    ok_data,
    wallet_clean,
)
from trading.models import Trade, TradeEvent, TradeItem
from wallet.models import Transfer

pytestmark = pytest.mark.django_db


def snapshot(*actors) -> dict:
    """Everything a wrongly scoped request could change."""
    return {
        "trades": sorted(Trade.objects.values_list("id", "status", "updated_at", "next_sequence")),
        "items": sorted(
            TradeItem.objects.values_list("id", "status", "locked", "cancel_requested_at")
        ),
        "events": TradeEvent.objects.count(),
        "purchases": sorted(SandboxPurchase.objects.values_list("key", "status")),
        "webhooks": sorted(
            WebhookEvent.objects.values_list("id", "status", "attempts", "next_attempt_at")
        ),
        "transfers": Transfer.objects.count(),
        "money": [money(actor) for actor in actors],
    }


@pytest.fixture
def world(desk, alice_funded, bob_funded, catalog_item):
    """alice's self buy and her client's withdrawal, both bought and 31 minutes old; bob and
    a second client of alice are the intruders."""
    first, second, third = (make_listing(catalog_item, p) for p in ("10.00", "20.00", "30.00"))
    own = ok_data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(42),
                "items": [
                    {"itemId": first.id, "price": Decimal("10.50"), "externalId": "own-line"},
                    {"itemId": second.id, "price": Decimal("21.00")},
                ],
                "externalId": "own-1",
            },
            headers=alice_funded.headers,
        )
    )
    owner = client_headers(desk.api, alice_funded, partner=1)
    theirs = ok_data(
        desk.post(
            "/client/trading/withdraw",
            {
                "items": [
                    {"itemId": third.id, "price": Decimal("31.50"), "externalId": "their-line"}
                ],
                "externalId": "their-1",
                "autoCancel": 720,
            },
            headers=owner,
        )
    )
    advance_minutes(desk, alice_funded, 31)
    # A regular (re-sendable) event of alice's: the trade.pending of her self buy.
    event = WebhookEvent.objects.get(
        merchant=alice_funded.merchant, subject_id=own["id"], type="trade.pending"
    )
    return {
        "own": own,
        "own_item": first.id,
        "theirs": theirs,
        "their_item": third.id,
        "event": str(event.id),
        "owner": owner,
        "alice2": client_headers(desk.api, alice_funded, partner=2),
        "bob_client": client_headers(desk.api, bob_funded, partner=1),  # the same account
    }


def key_requests(world: dict, ref: str, item_ref: str) -> list[tuple[str, str, object]]:
    return [
        ("get", f"/secure/trades/{ref}", None),
        ("get", f"/secure/trades/{ref},{ref}", None),
        ("post", f"/secure/buy/{ref}/cancel", None),
        ("post", f"/secure/buy/{ref}/items/{item_ref}/cancel", None),
        ("post", f"/sandbox/trades/{ref}/events", {"event": "purchased"}),
        ("post", f"/sandbox/trades/{ref}/events", {"event": "purchase_failed"}),
        ("post", f"/secure/webhooks/events/{world['event']}/resend", None),
    ]


EXPECTED = {
    "/secure/trades/": (404, 21, "TRADE_NOT_FOUND"),
    "/secure/buy/": (404, 2201, "ITEM_NOT_FOUND"),
    "/sandbox/trades/": (404, 21, "TRADE_NOT_FOUND"),
    "/secure/webhooks/": (404, 3010, "WEBHOOK_EVENT_NOT_FOUND"),
    "/client/trades/": (404, 21, "TRADE_NOT_FOUND"),
    "/client/trading/": (404, 2201, "ITEM_NOT_FOUND"),
}


def expected(path: str) -> tuple[int, int, str]:
    return next(value for prefix, value in EXPECTED.items() if path.startswith(prefix))


def call(desk, method: str, path: str, body: object, headers: dict[str, str]):
    if method == "get":
        return desk.get(path, headers=headers)
    return desk.post(path, body, headers=headers)


@pytest.mark.parametrize(
    ("trade", "ref_kind"),
    [("own", "id"), ("own", "externalId"), ("theirs", "id"), ("theirs", "externalId")],
)
def test_another_merchants_key_finds_nothing_and_changes_nothing(
    desk, alice_funded, bob_funded, world, trade, ref_kind
):
    ref = world[trade]["id"] if ref_kind == "id" else world[trade]["externalId"]
    item_id = world["own_item" if trade == "own" else "their_item"]
    item_ext = "own-line" if trade == "own" else "their-line"
    requests = key_requests(world, ref, item_id) + key_requests(world, ref, item_ext)[3:4]
    before = snapshot(alice_funded, bob_funded)
    for method, path, body in requests:
        response = call(desk, method, path, body, bob_funded.headers)
        if path.startswith("/secure/trades/") and "," in path:
            assert ok_data(response) == [], path  # a list omits what does not resolve
            continue
        assert_error(response, *expected(path))
    assert snapshot(alice_funded, bob_funded) == before
    assert wallet_clean()


@pytest.mark.parametrize("intruder", ["alice2", "bob_client"])
@pytest.mark.parametrize("ref_kind", ["id", "externalId"])
def test_another_clients_token_finds_nothing_and_changes_nothing(
    desk, alice_funded, bob_funded, world, intruder, ref_kind
):
    ref = world["theirs"]["id"] if ref_kind == "id" else "their-1"
    headers = world[intruder]
    before = snapshot(alice_funded, bob_funded)
    for item_ref in (world["their_item"], "their-line"):
        for method, path in (
            ("get", f"/client/trades/{ref}"),
            ("post", f"/client/trading/withdraw/{ref}/cancel"),
            ("post", f"/client/trading/withdraw/{ref}/items/{item_ref}/cancel"),
        ):
            assert_error(call(desk, method, path, None, headers), *expected(path))
    assert ok_data(desk.get("/client/trades", headers=headers))["items"] == []
    assert snapshot(alice_funded, bob_funded) == before


def test_a_client_token_does_not_reach_its_merchants_self_buys(desk, alice_funded, world):
    before = snapshot(alice_funded)
    for ref in (world["own"]["id"], "own-1"):
        for method, path in (
            ("get", f"/client/trades/{ref}"),
            ("post", f"/client/trading/withdraw/{ref}/cancel"),
            ("post", f"/client/trading/withdraw/{ref}/items/own-line/cancel"),
        ):
            assert_error(call(desk, method, path, None, world["owner"]), *expected(path))
    assert snapshot(alice_funded) == before


def test_a_client_token_is_no_key_and_a_key_is_no_client_token(desk, alice_funded, world):
    ref = world["own"]["id"]
    for path in (f"/secure/trades/{ref}", f"/secure/buy/{ref}/cancel"):
        response = call(desk, "post" if "cancel" in path else "get", path, None, world["owner"])
        assert response.status_code == 401
    response = desk.get(f"/client/trades/{world['theirs']['id']}", headers=alice_funded.headers)
    assert response.status_code == 401


def test_the_owners_own_calls_do_reach_the_trades(desk, alice_funded, world, hooks):
    """The control: the same calls by the owners work, so the refusals above are the scope."""
    own, theirs = world["own"]["id"], world["theirs"]["id"]
    assert ok_data(desk.get("/secure/trades/own-1", headers=alice_funded.headers))["id"] == own
    assert ok_data(desk.get("/client/trades/their-1", headers=world["owner"]))["id"] == theirs
    delivered = len(hooks.of_type("trade.pending"))
    resent = ok_data(
        desk.post(f"/secure/webhooks/events/{world['event']}/resend", headers=alice_funded.headers)
    )
    assert resent["id"] == world["event"]
    assert len(hooks.of_type("trade.pending")) == delivered + 1
    item = ok_data(
        desk.post(f"/secure/buy/{own}/items/own-line/cancel", headers=alice_funded.headers)
    )
    assert item["status"] == "cancelled"
    whole = ok_data(desk.post(f"/client/trading/withdraw/{theirs}/cancel", headers=world["owner"]))
    assert whole["cancelled"] == 1
    moved = ok_data(
        desk.post(
            f"/sandbox/trades/{own}/events", {"event": "purchased"}, headers=alice_funded.headers
        )
    )
    assert [i["status"] for i in moved["items"]] == ["canceled", "active"]
    assert money(alice_funded)["locked"] == Decimal("21.00")
    assert wallet_clean()
