"""A deposit's life through the HTTP API: the offer, acceptance, the hold, completion and
reversal, with the money of each credit kind and one webhook per change."""

from datetime import timedelta
from decimal import Decimal

import pytest

from core import clock
from sandbox.models import SandboxOffer
from tests.deposits.conftest import (
    OWNER,
    ak_item,
    authenticate,
    client_row,
    deposit,
    sell,
    trade_of,
)
from tests.factories import trade_url
from tests.withdrawals.conftest import (
    advance_minutes,
    make_listing,
    money,
    ok_data,
    sandbox_event,
    service_money,
    wallet_clean,
)
from trading.deposits.services.sweeps import deposit_holds_due_complete

pytestmark = pytest.mark.django_db

V = Decimal("36.00")
ZERO = Decimal("0.00")


def test_standard_deposit_is_created_initiated_then_offered_by_a_bot(desk, alice, owner, bot):
    created = ok_data(deposit(desk, owner, ak_item(0), externalId="dep-1"))

    assert created["type"] == "deposit"
    assert created["source"] == "client"
    assert created["status"] == "initiated"
    assert created["externalId"] == "dep-1"
    assert created["totalPrice"] == V
    assert created["preCredit"] == ZERO
    assert created["pendingCredit"] == V
    assert created["isInstant"] is False
    assert created["collateral"] == {"merchant": ZERO, "provider": ZERO}
    assert [i["id"] for i in created["items"]] == [ak_item(0)]
    assert created["items"][0]["marketHashName"] == "AK-47 | Redline (Field-Tested)"
    assert "offerID" not in created

    sent = trade_of(desk, owner, created["id"])
    offer = SandboxOffer.objects.get()
    assert sent["status"] == "active"
    assert sent["offerID"] == offer.offer_id
    assert sent["botInfo"] == {
        "name": bot.name,
        "avatar": bot.avatar,
        "platformId": bot.platform_id,
    }
    assert "activeAt" in sent
    assert offer.assets == [{"assetId": ak_item(0).split("_")[1], "amount": 1}]
    assert {i["status"] for i in sent["items"]} == {"active"}


def test_standard_deposit_waits_in_escrow_then_completes_when_the_hold_ends(
    desk, api, alice, owner, hooks
):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]

    held = ok_data(sandbox_event(desk, alice, trade_id, "accepted"))
    assert held["status"] == "hold"
    assert held["holdEndDate"].startswith(
        (clock.now() + timedelta(days=8)).strftime("%Y-%m-%dT%H:%M")
    )
    assert money(alice)["escrow"] == V
    assert money(alice)["available"] == ZERO
    assert wallet_clean()

    assert desk.run(deposit_holds_due_complete) == 0  # the hold has not ended
    advance_minutes(desk, alice, 8 * 24 * 60 + 1)
    assert desk.run(deposit_holds_due_complete) == 1
    assert desk.run(deposit_holds_due_complete) == 0  # nothing twice

    done = trade_of(desk, authenticate(api, alice, OWNER), trade_id)  # a fresh token: 8 days on
    assert done["status"] == "completed"
    assert done["pendingCredit"] == ZERO
    assert money(alice)["escrow"] == ZERO
    assert money(alice)["available"] == V
    assert service_money("deposit_items") == -V
    assert wallet_clean()
    types = [
        r.json["type"] for r in hooks.received if r.json.get("trade", {}).get("id") == trade_id
    ]
    assert types == [
        "trade.initiated",
        "trade.pending",
        "trade.active",
        "trade.hold",
        "trade.completed",
    ]
    sequences = [r.json["sequence"] for r in hooks.received if "trade" in r.json]
    assert sequences == sorted(sequences)


def test_reversal_of_a_standard_deposit_returns_the_escrow(desk, alice, owner):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    ok_data(sandbox_event(desk, alice, trade_id, "accepted"))

    reverted = ok_data(sandbox_event(desk, alice, trade_id, "reversed"))

    assert reverted["status"] == "reverted"
    assert reverted["revertedBy"] == "user"
    assert money(alice)["escrow"] == ZERO
    assert money(alice)["available"] == ZERO
    assert service_money("deposit_items") == ZERO
    assert wallet_clean()


def test_declined_offer_ends_the_deposit_without_money(desk, alice, owner):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]

    declined = ok_data(sandbox_event(desk, alice, trade_id, "declined"))

    assert declined["status"] == "declined"
    assert declined["error"] == "OFFER_NOT_ACCEPTED"
    assert declined["pendingCredit"] == ZERO
    assert money(alice) == dict.fromkeys(("available", "locked", "escrow", "collateral"), ZERO)
    assert wallet_clean()


def _instant(desk, api, alice, **client_data):
    headers = authenticate(api, alice, OWNER, **client_data)
    return headers, ok_data(deposit(desk, headers, ak_item(0), isInstant=True))


def test_instant_deposit_is_backed_by_provider_up_to_the_client_limit(desk, api, alice, world):
    # kycLevel 0 with no wager: limit min(50, 10 + 0) = 10.00
    _headers, created = _instant(desk, api, alice)

    assert created["isInstant"] is True
    assert created["preCredit"] == V
    assert created["pendingCredit"] == ZERO
    assert created["collateral"] == {"merchant": Decimal("26.00"), "provider": Decimal("10.00")}

    ok_data(sandbox_event(desk, alice, created["id"], "accepted"))
    assert money(alice)["available"] == Decimal("10.00")  # 36 credited, 26 set aside
    assert money(alice)["collateral"] == Decimal("26.00")
    assert service_money("provider_collateral") == -V
    assert wallet_clean()

    advance_minutes(desk, alice, 8 * 24 * 60 + 1)
    assert desk.run(deposit_holds_due_complete) == 1
    assert money(alice)["available"] == V
    assert money(alice)["collateral"] == ZERO
    assert service_money("provider_collateral") == ZERO
    assert service_money("deposit_items") == -V
    assert wallet_clean()


def test_instant_reversal_claws_back_merchant_collateral_and_books_provider_loss(
    desk, api, alice, world
):
    _, created = _instant(desk, api, alice)
    ok_data(sandbox_event(desk, alice, created["id"], "accepted"))

    ok_data(sandbox_event(desk, alice, created["id"], "reversed"))

    assert money(alice)["collateral"] == ZERO
    assert money(alice)["available"] == Decimal("10.00")  # the provider's part stays credited
    assert service_money("provider_losses") == Decimal("-10.00")
    assert service_money("provider_collateral") == ZERO
    assert wallet_clean()


def test_collateral_in_use_lowers_what_the_inventory_offers(desk, api, alice, world):
    headers = authenticate(api, alice, OWNER, kycLevel=1, totalWager=1000)  # limit 60.00
    before = ok_data(desk.get("/client/inventory", headers=headers))["collateral"]

    ok_data(deposit(desk, headers, ak_item(0), isInstant=True))

    after = ok_data(desk.get("/client/inventory", headers=headers))["collateral"]
    assert (before, after) == (Decimal("60.00"), Decimal("24.00"))


def test_platform_ids_sharing_a_kyc_hash_share_one_limit(desk, api, alice, world):
    first = authenticate(api, alice, OWNER, kycHash="person-1")  # limit 10.00
    second = authenticate(api, alice, 2, kycHash="person-1")

    one = ok_data(deposit(desk, first, ak_item(0), isInstant=True))
    two = ok_data(deposit(desk, second, "730_7000000000", isInstant=True))

    assert one["collateral"]["provider"] == Decimal("10.00")
    assert two["collateral"] == {"merchant": V, "provider": ZERO}
    assert ok_data(desk.get("/client/inventory", headers=second))["collateral"] == ZERO
    stranger = authenticate(api, alice, 3, kycHash="person-2")
    assert ok_data(desk.get("/client/inventory", headers=stranger))["collateral"] == Decimal(
        "10.00"
    )


def test_collateral_comes_back_when_the_instant_deposit_ends(desk, api, alice, world):
    headers, created = _instant(desk, api, alice)
    ok_data(sandbox_event(desk, alice, created["id"], "declined"))

    assert ok_data(desk.get("/client/inventory", headers=headers))["collateral"] == Decimal("10.00")


def test_self_sell_credits_on_acceptance_and_a_reversal_claws_back_everything(desk, alice, world):
    created = ok_data(sell(desk, alice, ak_item(0)))

    assert created["source"] == "self"
    assert created["status"] == "initiated"
    assert created["preCredit"] == V
    assert created["pendingCredit"] == ZERO
    assert created["collateral"] == {"merchant": ZERO, "provider": ZERO}
    assert "clientUserId" not in created

    ok_data(sandbox_event(desk, alice, created["id"], "accepted"))
    assert money(alice)["available"] == V
    assert wallet_clean()

    ok_data(sandbox_event(desk, alice, created["id"], "reversed"))
    assert money(alice)["available"] == ZERO
    assert service_money("deposit_items") == ZERO
    assert wallet_clean()


def test_self_sell_reversal_may_leave_the_merchant_in_debt(desk, alice, ak, world):
    created = ok_data(sell(desk, alice, ak_item(0)))
    ok_data(sandbox_event(desk, alice, created["id"], "accepted"))
    listing = make_listing(ak, "30.00")  # 31.50 with alice's 5 % fee
    bought = desk.post(
        "/secure/buy",
        {"tradeUrl": trade_url(2), "items": [{"itemId": listing.id, "price": Decimal("31.50")}]},
        headers=alice.headers,
    )
    assert ok_data(bought)["status"] == "initiated"

    ok_data(sandbox_event(desk, alice, created["id"], "reversed"))

    assert money(alice)["available"] == Decimal("-31.50")
    assert money(alice)["locked"] == Decimal("31.50")
    assert wallet_clean()
    other = make_listing(ak, "1.00")
    refused = desk.post(
        "/secure/buy",
        {"tradeUrl": trade_url(2), "items": [{"itemId": other.id, "price": Decimal("1.05")}]},
        headers=alice.headers,
    )
    assert refused.json()["error"]["key"] == "MERCHANT_BALANCE_LOW"


def test_self_sell_completes_without_further_money(desk, alice, world):
    created = ok_data(sell(desk, alice, ak_item(0)))
    ok_data(sandbox_event(desk, alice, created["id"], "accepted"))

    done = ok_data(sandbox_event(desk, alice, created["id"], "hold_ended"))

    assert done["status"] == "completed"
    assert money(alice)["available"] == V
    assert wallet_clean()


def test_second_game_stack_deposits_one_unit(desk, alice, owner):
    created = ok_data(deposit(desk, owner, "252490_6000000001", price="1.80", game="252490"))

    assert created["game"] == "252490"
    assert created["items"][0]["amount"] == 1
    assert created["totalPrice"] == Decimal("1.80")


def test_identity_verification_raises_the_collateral_cap(desk, api, alice, world):
    headers = authenticate(api, alice, OWNER, kycLevel=0, totalWager=2000)  # 10 + 100, cap 50
    assert ok_data(desk.get("/client/inventory", headers=headers))["collateral"] == Decimal("50.00")

    client = client_row(alice, OWNER)
    client.verification_level = 3  # what an accepted document-and-selfie check grants
    client.save(update_fields=["verification_level"])

    assert ok_data(desk.get("/client/inventory", headers=headers))["collateral"] == Decimal(
        "110.00"
    )


def _collateral_text(response) -> bytes:
    body = response.content
    start = body.index(b'"collateral":')
    return body[start : body.index(b"}", start) + 1]


@pytest.mark.parametrize("instant", [False, True])
def test_collateral_reads_the_same_when_created_and_when_read_back(
    desk, api, alice, bob, world, instant
):
    """Numbers as written, not only their values: a standard deposit showed 0 at creation and
    0.00 read back. bob's sell beside it is the same."""
    headers = authenticate(api, alice, OWNER)
    created = deposit(desk, headers, ak_item(0), isInstant=instant)
    read = desk.get(f"/client/trades/{created.json()['data']['id']}", headers=headers)
    sold = sell(desk, bob, ak_item(1), price="32.00")
    sold_read = desk.get(f"/secure/trades/{sold.json()['data']['id']}", headers=bob.headers)

    assert _collateral_text(created) == _collateral_text(read)
    assert _collateral_text(sold) == _collateral_text(sold_read)
    assert _collateral_text(sold) == b'"collateral":{"merchant":0.00,"provider":0.00}'
    if instant:
        assert _collateral_text(created) == b'"collateral":{"merchant":26.00,"provider":10.00}'
    else:
        assert _collateral_text(created) == b'"collateral":{"merchant":0.00,"provider":0.00}'
