"""Incoming transfers: deposit records (contract 2.8), their statuses, the 1:1 credit with its
funding, webhooks to a real receiver, the sandbox helpers and the history lists."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from standardwebhooks.webhooks import Webhook

from crypto.models import CryptoDeposit, FlaggedAddress, MerchantCryptoPolicy, SolanaTokenAccount
from crypto.services.deposits import crypto_deposits_sweep
from crypto.tasks import sweep_deposits
from ledger.models import Funding
from sandbox.models import SandboxChainTransfer, SandboxTokenAccount
from sandbox.tasks import crypto_sandbox_autopilot
from tests.crypto.conftest import (
    OTHER_USER,
    USER,
    clean,
    confirm,
    data,
    deposit_address,
    money,
    open_solana_address,
    send,
    user_headers,
)
from tests.factories import assert_error
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

SENDER = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"


def funding(deposit_id: str) -> Funding | None:
    return Funding.objects.filter(source_type="crypto_deposit", source_id=deposit_id).first()


def test_deposit_is_pending_until_its_confirmations_then_credited_1_to_1(desk, alice, hooks):
    address = deposit_address(desk, alice, "ETH")["address"]

    sent = data(send(desk, alice, "ETH", address, "25.123456", **{"from": SENDER}))
    deposit = sent["deposit"]
    assert sent["confirmations"] == 0
    assert sent["dropped"] is False
    assert deposit == {
        "id": deposit["id"],
        "type": "crypto_deposit",
        "status": "pending",
        "platformId": USER,
        "chain": "ETH",
        "token": "USDC",
        "amount": "25.12",
        "amountCents": 2512,
        "cryptoAmount": "25.123456",
        "address": address,
        "txHash": sent["txHash"],
        "from": SENDER,
        "createdAt": deposit["createdAt"],
        "updatedAt": deposit["updatedAt"],
        "completedAt": None,
    }
    assert sent["txHash"].startswith("0x")
    assert len(sent["txHash"]) == 66
    assert funding(deposit["id"]).status == Funding.Status.PENDING
    assert money(alice)["available"] == Decimal("1000.00")

    assert data(confirm(desk, alice, sent["txHash"], 11))["deposit"]["status"] == "pending"
    done = data(confirm(desk, alice, sent["txHash"], 12))["deposit"]

    assert done["status"] == "completed"
    assert done["completedAt"] == done["updatedAt"]
    assert money(alice)["available"] == Decimal("1025.12")
    row = funding(deposit["id"])
    assert (row.type, row.status, row.amount_usd) == ("DEPOSIT", "COMPLETED", Decimal("25.12"))
    assert (row.chain, row.token, row.txn_hash, row.address) == (
        "ETH",
        "USDC",
        sent["txHash"],
        address,
    )
    credit = Transfer.objects.get(cause_type="crypto_deposit", cause_id=deposit["id"])
    assert credit.kind == "CRYPTO_DEPOSIT"
    # Signed webhooks, one per status, numbered per deposit.
    assert [r.json["type"] for r in hooks.received] == [
        "crypto_deposit.pending",
        "crypto_deposit.completed",
    ]
    assert [r.json["sequence"] for r in hooks.received] == [1, 2]
    for received in hooks.received:
        Webhook(alice.merchant.webhook_secret).verify(received.body, received.headers)
    assert hooks.received[1].json["deposit"]["status"] == "completed"
    assert hooks.received[1].json["deposit"]["id"] == deposit["id"]
    assert clean()


def test_a_transfer_with_its_confirmations_completes_at_once(desk, alice, hooks):
    address = deposit_address(desk, alice, "BSC")["address"]
    sent = data(send(desk, alice, "BSC", address, "3", token="USDT", confirmations=15))
    assert sent["deposit"]["status"] == "completed"
    assert sent["deposit"]["token"] == "USDT"
    assert money(alice)["available"] == Decimal("1003.00")
    assert clean()


def test_below_the_minimum_is_never_credited(desk, alice, hooks):
    address = deposit_address(desk, alice, "ETH")["address"]  # minimum 1000 cents
    sent = data(send(desk, alice, "ETH", address, "9.999999"))
    assert sent["deposit"]["status"] == "below_minimum"
    assert sent["deposit"]["amountCents"] == 999

    after = data(confirm(desk, alice, sent["txHash"], 100))
    assert after["deposit"]["status"] == "below_minimum"
    assert money(alice)["available"] == Decimal("1000.00")
    assert funding(sent["deposit"]["id"]) is None
    assert [r.json["type"] for r in hooks.received] == ["crypto_deposit.below_minimum"]
    assert clean()


def staff_action(desk, model: str, action: str, ids: list[str]):
    staff = User.objects.filter(username="staff").first() or User.objects.create_superuser(
        "staff", "staff@example.com", "x"
    )
    desk.api.force_login(staff)
    with desk.capture(execute=True):
        return desk.api.post(f"/admin/crypto/{model}/", {"action": action, "_selected_action": ids})


def test_above_the_review_threshold_is_frozen_until_staff_release_it(desk, alice, hooks):
    MerchantCryptoPolicy.objects.create(merchant=alice.merchant, deposit_review_above_cents=5000)
    address = deposit_address(desk, alice, "ETH")["address"]
    small = data(send(desk, alice, "ETH", address, "50", confirmations=12))["deposit"]
    big = data(send(desk, alice, "ETH", address, "50.01", confirmations=12))["deposit"]

    assert small["status"] == "completed"
    assert big["status"] == "frozen"
    assert funding(big["id"]).status == Funding.Status.PENDING_ADMIN
    assert money(alice)["available"] == Decimal("1050.00")
    assert CryptoDeposit.objects.get(pk=big["id"]).review_reason == "ABOVE_REVIEW_THRESHOLD"

    response = staff_action(desk, "cryptodeposit", "release", [big["id"]])

    assert response.status_code == 302
    assert CryptoDeposit.objects.get(pk=big["id"]).status == "completed"
    assert money(alice)["available"] == Decimal("1100.01")
    assert funding(big["id"]).status == Funding.Status.COMPLETED
    entry = LogEntry.objects.get(object_id=big["id"])
    assert "Released by staff" in entry.get_change_message()
    assert hooks.of_type("crypto_deposit.frozen")[0].json["deposit"]["id"] == big["id"]
    assert hooks.of_type("crypto_deposit.completed")[-1].json["sequence"] == 3
    assert clean()


def test_staff_refund_a_frozen_deposit_from_a_flagged_sender(desk, alice, hooks):
    FlaggedAddress.objects.create(address=SENDER.lower(), reason="stolen funds")
    address = deposit_address(desk, alice, "ETH")["address"]
    frozen = data(send(desk, alice, "ETH", address, "20", confirmations=12, **{"from": SENDER}))
    assert frozen["deposit"]["status"] == "frozen"
    assert CryptoDeposit.objects.get(pk=frozen["deposit"]["id"]).review_reason == "FLAGGED_SENDER"

    staff_action(desk, "cryptodeposit", "refund", [frozen["deposit"]["id"]])

    row = CryptoDeposit.objects.get(pk=frozen["deposit"]["id"])
    assert row.status == "refunded"
    assert money(alice)["available"] == Decimal("1000.00")
    assert funding(str(row.id)).status == Funding.Status.REFUNDED
    assert LogEntry.objects.filter(object_id=str(row.id)).count() == 1
    # A second decision on a decided deposit changes nothing.
    staff_action(desk, "cryptodeposit", "release", [str(row.id)])
    assert CryptoDeposit.objects.get(pk=row.id).status == "refunded"
    assert money(alice)["available"] == Decimal("1000.00")
    assert clean()


def test_a_reorganised_transfer_fails_and_is_never_credited(desk, alice, hooks):
    address = deposit_address(desk, alice, "ETH")["address"]
    sent = data(send(desk, alice, "ETH", address, "30", confirmations=5))

    dropped = data(
        desk.post(f"/sandbox/crypto/transfers/{sent['txHash']}/reorg", headers=alice.headers)
    )

    assert dropped["dropped"] is True
    assert dropped["deposit"]["status"] == "failed"
    assert funding(sent["deposit"]["id"]).status == Funding.Status.FAILED
    assert money(alice)["available"] == Decimal("1000.00")
    again = desk.post(f"/sandbox/crypto/transfers/{sent['txHash']}/reorg", headers=alice.headers)
    assert_error(again, 409, 3002, "INVALID_TRANSITION")
    assert_error(confirm(desk, alice, sent["txHash"], 20), 409, 3002, "INVALID_TRANSITION")
    assert [r.json["type"] for r in hooks.received][-1] == "crypto_deposit.failed"
    assert clean()


def test_a_credited_deposit_cannot_be_reorganised(desk, alice):
    address = deposit_address(desk, alice, "ETH")["address"]
    sent = data(send(desk, alice, "ETH", address, "30", confirmations=12))
    response = desk.post(f"/sandbox/crypto/transfers/{sent['txHash']}/reorg", headers=alice.headers)
    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    assert CryptoDeposit.objects.get().status == "completed"


def test_confirmations_only_grow(desk, alice):
    address = deposit_address(desk, alice, "ETH")["address"]
    sent = data(send(desk, alice, "ETH", address, "30", confirmations=5))
    assert_error(confirm(desk, alice, sent["txHash"], 4), 409, 3002, "INVALID_TRANSITION")
    assert data(confirm(desk, alice, sent["txHash"], 5))["confirmations"] == 5


def test_a_paused_chain_credits_only_once_it_resumes(desk, alice, hooks):
    address = deposit_address(desk, alice, "ETH")["address"]
    desk.post("/sandbox/crypto/chains/ETH", {"paused": True}, headers=alice.headers)
    sent = data(send(desk, alice, "ETH", address, "40", confirmations=12))
    assert sent["deposit"]["status"] == "pending"
    assert desk.run(sweep_deposits.delay).get() >= 1
    assert CryptoDeposit.objects.get().status == "pending"

    desk.post("/sandbox/crypto/chains/ETH", {"paused": False}, headers=alice.headers)
    desk.run(crypto_deposits_sweep)

    assert CryptoDeposit.objects.get().status == "completed"
    assert money(alice)["available"] == Decimal("1040.00")
    assert clean()


def test_confirmations_seen_by_the_sweep_complete_deposits(desk, alice):
    address = deposit_address(desk, alice, "BSC")["address"]
    sent = data(send(desk, alice, "BSC", address, "7"))
    SandboxChainTransfer.objects.filter(tx_hash=sent["txHash"]).update(confirmations=15)

    desk.run(crypto_deposits_sweep)

    assert CryptoDeposit.objects.get().status == "completed"
    assert money(alice)["available"] == Decimal("1007.00")


def test_autopilot_confirms_transfers_by_itself(desk, alice, settings, clock_advance):
    settings.SANDBOX_AUTOPILOT_SECONDS = 5
    address = deposit_address(desk, alice, "ETH")["address"]
    data(send(desk, alice, "ETH", address, "12"))
    assert desk.run(crypto_sandbox_autopilot.delay).get() == 0
    assert CryptoDeposit.objects.get().status == "pending"

    clock_advance(6)
    assert desk.run(crypto_sandbox_autopilot.delay).get() == 1

    assert CryptoDeposit.objects.get().confirmations == 12
    assert CryptoDeposit.objects.get().status == "completed"
    assert money(alice)["available"] == Decimal("1012.00")


def test_solana_deposit_lands_in_the_token_account_which_closes_once_swept(
    desk, alice, clock_advance, hooks
):
    active = open_solana_address(desk, alice, clock_advance)
    sent = data(send(desk, alice, "SOL", active["address"], "15.5"))
    assert sent["deposit"]["address"] == active["address"]
    assert len(sent["txHash"]) >= 80  # a base58 signature
    assert data(confirm(desk, alice, sent["txHash"], 32))["deposit"]["status"] == "completed"

    account = SolanaTokenAccount.objects.get(address=active["tokenAccount"])
    assert account.status == "closed"
    assert account.close_pending is False  # the chain swept and closed it after commit
    assert SandboxTokenAccount.objects.get(address=active["tokenAccount"]).state == "closed"
    # A closed account takes no transfers until asked for again.
    response = send(desk, alice, "SOL", active["address"], "1")
    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    again = deposit_address(desk, alice, "SOL")
    assert again["status"] == "pending"
    clock_advance(11)
    reopened = deposit_address(desk, alice, "SOL")
    assert reopened["tokenAccount"] == active["tokenAccount"]
    # The account address names the user as well as the owner address does.
    second = data(send(desk, alice, "SOL", reopened["tokenAccount"], "2", confirmations=32))
    assert second["deposit"]["address"] == active["address"]
    assert money(alice)["available"] == Decimal("1017.50")
    assert clean()


def test_an_account_with_another_deposit_in_flight_stays_open(desk, alice, clock_advance):
    active = open_solana_address(desk, alice, clock_advance)
    first = data(send(desk, alice, "SOL", active["address"], "5"))
    data(send(desk, alice, "SOL", active["address"], "6"))
    data(confirm(desk, alice, first["txHash"], 32))
    assert SolanaTokenAccount.objects.get(address=active["tokenAccount"]).status == "active"


def test_a_solana_transfer_needs_the_tokens_account_open(desk, alice, clock_advance):
    pending = deposit_address(desk, alice, "SOL")
    assert pending["status"] == "pending"
    owner = open_solana_address(desk, alice, clock_advance)["address"]
    response = send(desk, alice, "SOL", owner, "5", token="USDT")
    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    assert not CryptoDeposit.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"amount": "-1"}, "amount"),
        ({"amount": -1}, "amount"),
        ({"amount": 1_000_000_001}, "amount"),
        ({"amount": "1000000000"}, "amount"),
        ({"amount": "ten"}, "amount"),
        ({"amount": " 5"}, "amount"),
        ({"amount": True}, "amount"),
        ({"confirmations": -1}, "confirmations"),
        ({"chain": "TRX"}, "chain"),
        ({"extra": 1}, "extra"),
    ],
)
def test_sandbox_transfer_input_is_validated(desk, alice, fields, field):
    address = deposit_address(desk, alice, "ETH")["address"]
    body = {"chain": "ETH", "token": "USDC", "address": address, "amount": "5"} | fields
    response = desk.post("/sandbox/crypto/transfers", body, headers=alice.headers)
    assert field in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]
    assert not CryptoDeposit.objects.exists()


@pytest.mark.parametrize(
    "amount",
    ["1.0000001", "0", "0.0", 0],  # 7 decimals on a 6-decimal token; not above 0
)
def test_an_amount_the_token_cannot_carry_is_an_invalid_amount(desk, alice, amount):
    """The document cannot tie the decimals to the token: the service's refusal, 1601."""
    address = deposit_address(desk, alice, "ETH")["address"]
    body = {"chain": "ETH", "token": "USDC", "address": address, "amount": amount}

    response = desk.post("/sandbox/crypto/transfers", body, headers=alice.headers)

    assert "amount" in assert_error(response, 400, 1601, "INVALID_AMOUNT")["fields"]
    assert not CryptoDeposit.objects.exists()


def test_a_sender_not_of_the_chain_is_an_invalid_address(desk, alice):
    address = deposit_address(desk, alice, "ETH")["address"]
    body = {"chain": "ETH", "token": "USDC", "address": address, "amount": "5", "from": "0xnothex"}

    response = desk.post("/sandbox/crypto/transfers", body, headers=alice.headers)

    error = assert_error(response, 400, 3004, "ONCHAIN_WITHDRAW_INVALID_ADDRESS")
    assert set(error["fields"]) == {"from"}
    assert not CryptoDeposit.objects.exists()


def test_eighteen_decimals_are_kept_on_bsc(desk, alice):
    address = deposit_address(desk, alice, "BSC")["address"]
    sent = data(send(desk, alice, "BSC", address, "1.123456789012345678", confirmations=15))
    assert sent["deposit"]["cryptoAmount"] == "1.123456789012345678"
    assert sent["deposit"]["amount"] == "1.12"


def test_only_the_merchants_own_addresses_take_sandbox_transfers(desk, alice, bob):
    bobs = deposit_address(desk, bob, "ETH")["address"]
    for address in (bobs, "0x976EA74026E726554dB657fA54763abd0C3a0aa9"):
        response = send(desk, alice, "ETH", address, "50")
        error = assert_error(response, 400, 3004, "ONCHAIN_WITHDRAW_INVALID_ADDRESS")
        assert "address" in error["fields"]
    assert not CryptoDeposit.objects.exists()


def test_another_merchants_transaction_is_not_found_and_stays_as_it_is(desk, alice, bob):
    address = deposit_address(desk, alice, "ETH")["address"]
    sent = data(send(desk, alice, "ETH", address, "50"))
    for response in (
        confirm(desk, bob, sent["txHash"], 12),
        desk.post(f"/sandbox/crypto/transfers/{sent['txHash']}/reorg", headers=bob.headers),
        confirm(desk, bob, "0x" + "ab" * 32, 12),
    ):
        assert_error(response, 404, 3001, "TRANSACTION_NOT_FOUND")
    deposit = CryptoDeposit.objects.get()
    assert (deposit.status, deposit.confirmations) == ("pending", 0)
    assert SandboxChainTransfer.objects.get(tx_hash=sent["txHash"]).confirmations == 0
    assert money(alice)["available"] == Decimal("1000.00")


def make_deposits(desk, actor, count: int, user: str = USER) -> list[str]:
    address = deposit_address(desk, actor, "ETH", user=user)["address"]
    return [
        data(send(desk, actor, "ETH", address, f"{10 + n}"))["deposit"]["id"] for n in range(count)
    ]


def test_secure_history_pages_newest_first_with_next_before(desk, alice):
    ids = make_deposits(desk, alice, 5)
    seen: list[str] = []
    params = {"platformId": USER, "limit": 2}
    while True:
        page = data(desk.get("/secure/crypto/deposits", headers=alice.headers, params=params))
        seen += [d["id"] for d in page["deposits"]]
        if page["nextBefore"] is None:
            break
        assert page["nextBefore"] == page["deposits"][-1]["createdAt"]
        params["before"] = page["nextBefore"]
    assert seen == list(reversed(ids))


def test_deposits_sharing_a_time_all_go_on_one_page(desk, alice):
    ids = make_deposits(desk, alice, 4)
    moment = CryptoDeposit.objects.get(pk=ids[0]).created_at
    CryptoDeposit.objects.filter(pk__in=ids[1:3]).update(created_at=moment.replace(year=2030))
    CryptoDeposit.objects.filter(pk=ids[3]).update(created_at=moment.replace(year=2031))

    first = data(
        desk.get(
            "/secure/crypto/deposits",
            headers=alice.headers,
            params={"platformId": USER, "limit": 2},
        )
    )
    assert first["deposits"][0]["id"] == ids[3]
    assert {d["id"] for d in first["deposits"][1:]} == set(ids[1:3])  # 3 rows: no split
    rest = data(
        desk.get(
            "/secure/crypto/deposits",
            headers=alice.headers,
            params={"platformId": USER, "limit": 2, "before": first["nextBefore"]},
        )
    )
    assert [d["id"] for d in rest["deposits"]] == [ids[0]]
    assert rest["nextBefore"] is None


def test_client_history_shows_the_tokens_own_deposits_only(desk, alice, bob):
    mine = make_deposits(desk, alice, 2)
    make_deposits(desk, alice, 1, user=OTHER_USER)
    make_deposits(desk, bob, 1)
    page = data(desk.get("/client/crypto/deposits", headers=user_headers(desk, alice)))
    assert [d["id"] for d in page["deposits"]] == list(reversed(mine))
    assert page["nextBefore"] is None
    assert (
        data(desk.get("/client/crypto/deposits", headers=user_headers(desk, bob, 3)))["deposits"]
        == []
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "platformId"),
        ({"platformId": USER, "limit": 0}, "limit"),
        ({"platformId": USER, "limit": 101}, "limit"),
        ({"platformId": USER, "before": "yesterday"}, "before"),
        # The document's format: an RFC 3339 date-time, with its offset and a "T".
        ({"platformId": USER, "before": "2026-05-02T12:00:00"}, "before"),
        ({"platformId": USER, "before": "2026-05-02 12:00:00Z"}, "before"),
        ({"platformId": USER, "before": "2026-05-02"}, "before"),
    ],
)
def test_history_queries_are_validated(desk, alice, params, field):
    response = desk.get("/secure/crypto/deposits", headers=alice.headers, params=params)
    assert field in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]


def test_another_merchants_solana_address_is_not_revealed_by_its_account_state(
    desk, alice, bob, clock_advance
):
    bobs = open_solana_address(desk, bob, clock_advance)["address"]
    for token in ("USDC", "USDT"):  # bob's USDC account is open, his USDT one is not
        response = send(desk, alice, "SOL", bobs, "5", token=token)
        error = assert_error(response, 400, 3004, "ONCHAIN_WITHDRAW_INVALID_ADDRESS")
        assert "address" in error["fields"]
    assert not CryptoDeposit.objects.exists()
