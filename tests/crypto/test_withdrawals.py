"""Crypto cashouts: creation (200, as every create; the object of decisions section 6), the
approval callback, staff review, broadcasts and their failures, confirmations and settlement,
refunds, errors."""

from decimal import Decimal

import orjson
import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from standardwebhooks.webhooks import Webhook

from crypto.models import CryptoWithdrawal, MerchantCryptoPolicy
from crypto.tasks import sweep_withdrawals
from ledger.models import Funding
from merchants.callers import callers_changed
from merchants.models import Merchant
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.tasks import sweep_webhooks
from sandbox.models import SandboxChainTransfer
from tests.crypto.conftest import (
    OTHER_USER,
    RECIPIENT,
    SOL_RECIPIENT,
    USER,
    cashout_body,
    clean,
    confirm,
    data,
    money,
    user_headers,
)
from tests.factories import assert_error, make_actor
from tests.withdrawals.conftest import service_money
from wallet.selectors import wallet_invariants_check

pytestmark = pytest.mark.django_db


def client_cashout(desk, actor, partner: int = 1, **fields):
    return desk.post(
        "/client/crypto/withdraw",
        cashout_body(**fields),
        headers=user_headers(desk, actor, partner),
    )


def secure_cashout(desk, actor, **fields):
    body = cashout_body(platformId=USER) | fields
    return desk.post("/secure/crypto/withdraw", body, headers=actor.headers)


def row(withdrawal_id: str) -> CryptoWithdrawal:
    return CryptoWithdrawal.objects.get(pk=withdrawal_id)


def fundings(withdrawal_id: str) -> dict[str, str]:
    return dict(
        Funding.objects.filter(
            source_type="crypto_withdrawal", source_id=withdrawal_id
        ).values_list("type", "status")
    )


def types(hooks) -> list[str]:
    return [r.json["type"] for r in hooks.received]


def staff_action(desk, action: str, ids: list[str]):
    staff = User.objects.filter(username="staff").first() or User.objects.create_superuser(
        "staff", "staff@example.com", "x"
    )
    desk.api.force_login(staff)
    with desk.capture(execute=True):
        return desk.api.post(
            "/admin/crypto/cryptowithdrawal/", {"action": action, "_selected_action": ids}
        )


def test_client_cashout_is_approved_by_callback_sent_and_settled(desk, alice, hooks):
    created = data(client_cashout(desk, alice))

    assert created == {
        "id": created["id"],
        "type": "crypto_withdraw",
        "status": "awaiting_approval",
        "platformId": USER,
        "chain": "ETH",
        "token": "USDC",
        "amount": "25.00",
        "amountCents": 2500,
        "feeCents": 500,
        "receiveCents": 2000,
        "cryptoAmount": "20.000000",
        "address": RECIPIENT,
        "txHash": None,
        "reason": None,
        "createdAt": created["createdAt"],
        "updatedAt": created["createdAt"],
        "completedAt": None,
    }
    # The approval callback went out signed; its 2xx approved, and the worker broadcast it.
    approval = hooks.of_type("crypto_withdrawal.awaiting_approval")[0]
    Webhook(alice.merchant.webhook_secret).verify(approval.body, approval.headers)
    assert WebhookEvent.objects.get(type="crypto_withdrawal.awaiting_approval").is_approval
    sent = row(created["id"])
    assert sent.status == "sent"
    assert sent.tx_hash.startswith("0x")
    transfer = SandboxChainTransfer.objects.get(tx_hash=sent.tx_hash)
    assert (transfer.to_address, transfer.amount) == (RECIPIENT, Decimal("20"))
    assert transfer.contract == "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
    assert money(alice)["available"] == Decimal("975.00")
    assert money(alice)["locked"] == Decimal("25.00")
    assert fundings(created["id"]) == {"WITHDRAWAL": "PENDING"}
    assert clean()

    done = data(confirm(desk, alice, sent.tx_hash, 12))["withdrawal"]

    assert done["status"] == "completed"
    assert done["txHash"] == sent.tx_hash
    assert money(alice)["available"] == Decimal("975.00")
    assert money(alice)["locked"] == Decimal("0.00")
    assert service_money("world") == Decimal("-1000.00") + Decimal("20.00")
    assert service_money("revenue") == Decimal("5.00")
    funding = Funding.objects.get(source_id=created["id"], type="WITHDRAWAL")
    assert (funding.status, funding.amount_usd, funding.fee) == (
        "COMPLETED",
        Decimal("25.00"),
        Decimal("5.00"),
    )
    assert (funding.amount_crypto, funding.txn_hash) == (Decimal("20.000000"), sent.tx_hash)
    assert types(hooks) == [
        "crypto_withdrawal.awaiting_approval",
        "crypto_withdrawal.approved",
        "crypto_withdrawal.sent",
        "crypto_withdrawal.completed",
    ]
    assert [r.json["sequence"] for r in hooks.received] == [1, 2, 3, 4]
    assert hooks.received[-1].json["withdrawal"]["status"] == "completed"
    assert clean()


@pytest.mark.parametrize(
    "answer",
    [(200, orjson.dumps({"action": "reject", "reason": "limit"})), (403, b"{}")],
)
def test_merchant_rejects_and_the_whole_amount_comes_back(desk, alice, hooks, answer):
    hooks.answer = lambda _: answer
    created = data(client_cashout(desk, alice))

    rejected = row(created["id"])
    assert (rejected.status, rejected.reason) == ("rejected", "MERCHANT_REJECTED")
    assert money(alice)["available"] == Decimal("1000.00")
    assert money(alice)["locked"] == Decimal("0.00")
    assert fundings(created["id"]) == {"WITHDRAWAL": "REJECTED", "REFUND": "COMPLETED"}
    assert types(hooks)[-1] == "crypto_withdrawal.rejected"
    assert hooks.received[-1].json["withdrawal"]["reason"] == "MERCHANT_REJECTED"
    assert not SandboxChainTransfer.objects.exists()
    assert clean()


def test_unanswered_approval_fails_with_approval_timeout(desk, alice, hooks, clock_advance):
    hooks.answer = lambda _: (503, b"")
    created = data(client_cashout(desk, alice))
    assert row(created["id"]).status == "awaiting_approval"
    for seconds in (3, 6):
        clock_advance(seconds)
        desk.run(sweep_webhooks.delay)

    failed = row(created["id"])
    assert (failed.status, failed.reason) == ("failed", "APPROVAL_TIMEOUT")
    assert money(alice)["available"] == Decimal("1000.00")
    assert fundings(created["id"]) == {"WITHDRAWAL": "FAILED", "REFUND": "COMPLETED"}
    assert clean()


def test_above_the_threshold_staff_approve_after_the_merchant(desk, alice, hooks):
    MerchantCryptoPolicy.objects.create(merchant=alice.merchant, withdraw_review_above_cents=2000)
    created = data(client_cashout(desk, alice))
    assert row(created["id"]).status == "in_review"
    assert fundings(created["id"]) == {"WITHDRAWAL": "PENDING_ADMIN"}

    response = staff_action(desk, "approve", [created["id"]])

    assert response.status_code == 302
    assert row(created["id"]).status == "sent"
    assert "Approved by staff" in LogEntry.objects.get(object_id=created["id"]).get_change_message()
    assert types(hooks) == [
        "crypto_withdrawal.awaiting_approval",
        "crypto_withdrawal.in_review",
        "crypto_withdrawal.approved",
        "crypto_withdrawal.sent",
    ]
    assert clean()


def test_staff_reject_a_cashout_in_review(desk, alice, hooks):
    MerchantCryptoPolicy.objects.create(merchant=alice.merchant, withdraw_review_above_cents=2000)
    created = data(secure_cashout(desk, alice))
    assert created["status"] == "in_review"  # self cashouts need no merchant approval

    staff_action(desk, "reject", [created["id"]])

    rejected = row(created["id"])
    assert (rejected.status, rejected.reason) == ("rejected", "STAFF_REJECTED")
    assert money(alice)["available"] == Decimal("1000.00")
    assert LogEntry.objects.filter(object_id=created["id"]).count() == 1
    # Deciding again changes nothing and logs nothing.
    staff_action(desk, "approve", [created["id"]])
    assert row(created["id"]).status == "rejected"
    assert LogEntry.objects.filter(object_id=created["id"]).count() == 1
    assert clean()


def test_staff_cancel_a_cashout_awaiting_approval_but_not_a_sent_one(desk, alice, hooks):
    hooks.answer = lambda _: (503, b"")
    waiting = data(client_cashout(desk, alice, requestId="req-waiting"))
    sent = data(secure_cashout(desk, alice, requestId="req-sent1"))
    assert row(sent["id"]).status == "sent"

    staff_action(desk, "cancel", [waiting["id"], sent["id"]])

    cancelled = row(waiting["id"])
    assert (cancelled.status, cancelled.reason) == ("cancelled", "CANCELLED_BY_STAFF")
    assert row(sent["id"]).status == "sent"
    assert money(alice)["locked"] == Decimal("25.00")
    assert fundings(waiting["id"]) == {"WITHDRAWAL": "CANCELLED", "REFUND": "COMPLETED"}
    assert clean()


def test_secure_cashout_is_approved_at_once(desk, alice, hooks):
    created = data(
        secure_cashout(
            desk, alice, chain="SOL", token="USDT", address=SOL_RECIPIENT, amountCents=150
        )
    )
    assert created["status"] == "approved"
    assert (created["feeCents"], created["receiveCents"]) == (50, 100)
    assert row(created["id"]).status == "sent"
    assert len(row(created["id"]).tx_hash) >= 80
    assert types(hooks) == ["crypto_withdrawal.approved", "crypto_withdrawal.sent"]
    assert clean()


def test_a_refused_broadcast_is_retried_then_fails_and_refunds(desk, alice, hooks, clock_advance):
    desk.post("/sandbox/crypto/chains/ETH", {"failBroadcasts": True}, headers=alice.headers)
    created = data(secure_cashout(desk, alice))
    assert row(created["id"]).broadcast_attempts == 1
    assert desk.run(sweep_withdrawals.delay).get() == 0  # the next try is not due yet

    clock_advance(31)
    desk.run(sweep_withdrawals.delay)
    assert (row(created["id"]).status, row(created["id"]).broadcast_attempts) == ("approved", 2)
    clock_advance(121)
    desk.run(sweep_withdrawals.delay)

    failed = row(created["id"])
    assert (failed.status, failed.reason) == ("failed", "BROADCAST_FAILED")
    assert money(alice)["available"] == Decimal("1000.00")
    assert not SandboxChainTransfer.objects.exists()
    assert types(hooks)[-1] == "crypto_withdrawal.failed"
    assert clean()


def test_a_broadcast_goes_out_once_the_node_accepts_again(desk, alice, clock_advance):
    desk.post("/sandbox/crypto/chains/BSC", {"failBroadcasts": True}, headers=alice.headers)
    created = data(secure_cashout(desk, alice, chain="BSC"))
    desk.post("/sandbox/crypto/chains/BSC", {"failBroadcasts": False}, headers=alice.headers)
    clock_advance(31)
    desk.run(sweep_withdrawals.delay)
    assert row(created["id"]).status == "sent"
    assert SandboxChainTransfer.objects.get().amount == Decimal("24.5")  # BSC fee 50 cents


def test_a_paused_chain_holds_broadcasts_and_completions(desk, alice):
    desk.post("/sandbox/crypto/chains/ETH", {"paused": True}, headers=alice.headers)
    created = data(secure_cashout(desk, alice))
    assert row(created["id"]).status == "approved"
    desk.post("/sandbox/crypto/chains/ETH", {"paused": False}, headers=alice.headers)
    desk.run(sweep_withdrawals.delay)
    sent = row(created["id"])
    assert sent.status == "sent"

    desk.post("/sandbox/crypto/chains/ETH", {"paused": True}, headers=alice.headers)
    assert data(confirm(desk, alice, sent.tx_hash, 12))["withdrawal"]["status"] == "sent"
    desk.post("/sandbox/crypto/chains/ETH", {"paused": False}, headers=alice.headers)
    desk.run(sweep_withdrawals.delay)
    assert row(created["id"]).status == "completed"
    assert clean()


def test_a_dropped_transaction_fails_the_cashout_and_refunds(desk, alice, hooks):
    created = data(secure_cashout(desk, alice))
    tx_hash = row(created["id"]).tx_hash

    dropped = data(desk.post(f"/sandbox/crypto/transfers/{tx_hash}/reorg", headers=alice.headers))

    assert dropped["withdrawal"]["status"] == "failed"
    assert dropped["withdrawal"]["reason"] == "TX_DROPPED"
    assert dropped["deposit"] is None
    assert money(alice)["available"] == Decimal("1000.00")
    assert fundings(created["id"]) == {"WITHDRAWAL": "FAILED", "REFUND": "COMPLETED"}
    assert clean()


def test_a_completed_cashout_cannot_be_reorganised(desk, alice):
    created = data(secure_cashout(desk, alice))
    tx_hash = row(created["id"]).tx_hash
    data(confirm(desk, alice, tx_hash, 12))
    response = desk.post(f"/sandbox/crypto/transfers/{tx_hash}/reorg", headers=alice.headers)
    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    assert row(created["id"]).status == "completed"


def test_another_merchants_cashout_transaction_is_not_found(desk, alice, bob):
    created = data(secure_cashout(desk, alice))
    tx_hash = row(created["id"]).tx_hash
    assert_error(confirm(desk, bob, tx_hash, 12), 404, 3001, "TRANSACTION_NOT_FOUND")
    response = desk.post(f"/sandbox/crypto/transfers/{tx_hash}/reorg", headers=bob.headers)
    assert_error(response, 404, 3001, "TRANSACTION_NOT_FOUND")
    assert row(created["id"]).status == "sent"
    assert SandboxChainTransfer.objects.get().confirmations == 0


def test_the_same_request_id_returns_the_first_cashout(desk, alice):
    first = client_cashout(desk, alice)
    again = client_cashout(desk, alice, amountCents=9000)
    assert first.status_code == 200
    assert again.status_code == 200
    assert data(again)["id"] == data(first)["id"]
    assert data(again)["amountCents"] == 2500
    # The same requestId of another user, or on the secure route for another user, is new.
    other = data(client_cashout(desk, alice, partner=2))
    assert other["id"] != data(first)["id"]
    secure_same_user = secure_cashout(desk, alice)
    assert secure_same_user.status_code == 200
    assert data(secure_same_user)["id"] == data(first)["id"]
    assert CryptoWithdrawal.objects.count() == 2
    assert money(alice)["locked"] + money(alice)["available"] == Decimal("1000.00")
    assert clean()


def test_short_balance_is_3003_and_locks_nothing(desk, alice):
    response = secure_cashout(desk, alice, amountCents=100_001)
    assert_error(response, 400, 3003, "INSUFFICIENT_BALANCE")
    assert not CryptoWithdrawal.objects.exists()
    assert not Funding.objects.exists()
    assert money(alice)["available"] == Decimal("1000.00")
    assert data(secure_cashout(desk, alice, amountCents=100_000))["amountCents"] == 100_000
    assert clean()


@pytest.mark.parametrize(
    ("chain", "address"),
    [
        ("ETH", RECIPIENT.lower()),
        ("BSC", RECIPIENT[:-1] + "C"),
        ("ETH", SOL_RECIPIENT),
        ("SOL", RECIPIENT),
        ("SOL", "5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N0"),
    ],
)
def test_an_address_invalid_for_its_chain_is_3004(desk, alice, chain, address):
    for response in (
        secure_cashout(desk, alice, chain=chain, address=address),
        client_cashout(desk, alice, chain=chain, address=address),
    ):
        assert_error(response, 400, 3004, "ONCHAIN_WITHDRAW_INVALID_ADDRESS")
    assert not CryptoWithdrawal.objects.exists()


@pytest.mark.parametrize(
    ("chain", "cents"), [("ETH", 500), ("ETH", 1499), ("SOL", 149), ("BSC", 1)]
)
def test_too_little_to_arrive_is_3005(desk, alice, chain, cents):
    address = SOL_RECIPIENT if chain == "SOL" else RECIPIENT
    for response in (
        secure_cashout(desk, alice, chain=chain, address=address, amountCents=cents),
        client_cashout(desk, alice, chain=chain, address=address, amountCents=cents),
    ):
        assert_error(response, 400, 3005, "ONCHAIN_WITHDRAW_BELOW_MIN")
    assert money(alice)["available"] == Decimal("1000.00")


def test_crypto_off_is_2500_and_unverified_is_2522(desk, alice, settings, db):
    settings.CRYPTO_ENABLED = False
    assert_error(secure_cashout(desk, alice), 503, 2500, "ONCHAIN_DISABLED")
    assert_error(client_cashout(desk, alice), 503, 2500, "ONCHAIN_DISABLED")
    settings.CRYPTO_ENABLED = True
    Merchant.objects.filter(pk=alice.merchant.pk).update(is_verified=False)
    callers_changed()  # as the admin's change does
    assert_error(secure_cashout(desk, alice), 403, 2522, "ONCHAIN_MERCHANT_NOT_VERIFIED")
    assert_error(client_cashout(desk, alice), 403, 2522, "ONCHAIN_MERCHANT_NOT_VERIFIED")
    assert not CryptoWithdrawal.objects.exists()


def test_client_cashout_needs_a_callback_url(desk, db):
    actor = make_actor(name="No callback")
    from wallet.services import wallet_admin_credit

    wallet_admin_credit(merchant=actor.merchant, amount=Decimal("100.00"), reason="test")
    assert_error(client_cashout(desk, actor), 400, 1705, "MERCHANT_NO_CALLBACK_URL")
    assert data(secure_cashout(desk, actor))["status"] == "approved"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"requestId": "short"}, "requestId"),
        ({"requestId": "x" * 65}, "requestId"),
        ({"requestId": "has space1"}, "requestId"),
        ({"amountCents": 0}, "amountCents"),
        ({"amountCents": 100_000_001}, "amountCents"),
        ({"amountCents": "2500"}, "amountCents"),
        ({"token": "DAI"}, "token"),
        ({"chain": "TRX"}, "chain"),
        ({"memo": "x"}, "memo"),
    ],
)
def test_bad_bodies_are_validation_failed(desk, alice, fields, field):
    response = client_cashout(desk, alice, **fields)
    assert field in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]
    response = desk.post("/secure/crypto/withdraw", cashout_body(**fields), headers=alice.headers)
    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert {field, "platformId"} <= set(error["fields"])
    assert not CryptoWithdrawal.objects.exists()


def test_histories_page_newest_first_and_stay_with_their_user(desk, alice, bob):
    ids = [data(secure_cashout(desk, alice, requestId=f"req-hist-{n}"))["id"] for n in range(3)]
    data(secure_cashout(desk, alice, platformId=OTHER_USER, requestId="req-other"))
    data(secure_cashout(desk, bob, requestId="req-bob-1"))

    page = data(
        desk.get(
            "/secure/crypto/withdrawals",
            headers=alice.headers,
            params={"platformId": USER, "limit": 2},
        )
    )
    assert [w["id"] for w in page["withdrawals"]] == [ids[2], ids[1]]
    rest = data(
        desk.get(
            "/secure/crypto/withdrawals",
            headers=alice.headers,
            params={"platformId": USER, "limit": 2, "before": page["nextBefore"]},
        )
    )
    assert [w["id"] for w in rest["withdrawals"]] == [ids[0]]
    assert rest["nextBefore"] is None
    mine = data(desk.get("/client/crypto/withdrawals", headers=user_headers(desk, alice)))
    assert [w["id"] for w in mine["withdrawals"]] == list(reversed(ids))
    bobs_user = data(desk.get("/client/crypto/withdrawals", headers=user_headers(desk, bob)))
    assert len(bobs_user["withdrawals"]) == 1
    assert bobs_user["withdrawals"][0]["id"] not in ids
    response = desk.get("/secure/crypto/withdrawals", headers=alice.headers)
    assert "platformId" in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]


def test_the_invariant_check_counts_cashout_locks(desk, alice):
    created = data(secure_cashout(desk, alice))
    assert clean()
    CryptoWithdrawal.objects.filter(pk=created["id"]).update(status="completed")
    report = wallet_invariants_check()
    assert any(
        f"cashout {created['id']} is completed but holds 25.00" in p for p in report.orphan_locks
    )
    CryptoWithdrawal.objects.filter(pk=created["id"]).update(status="sent", locked=Decimal("0.00"))
    assert any("held by trades and cashouts 0" in p for p in wallet_invariants_check().orphan_locks)


def test_a_client_short_of_balance_is_3003_too(desk, alice):
    response = client_cashout(desk, alice, amountCents=100_001)
    assert_error(response, 400, 3003, "INSUFFICIENT_BALANCE")
    assert not CryptoWithdrawal.objects.exists()
    assert money(alice)["available"] == Decimal("1000.00")
