"""The staff console's money pages, through the Django test client as a staff user: fundings,
credits and debits with a reason, transfers between merchants, each one audited."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.contrib.messages import get_messages

from ledger.models import Funding
from merchants.models import Merchant
from tests.ledger.conftest import fund, ledger
from wallet.models import Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db

FUNDINGS = "/admin/ledger/funding/"
ADJUST = "/admin/ledger/funding/adjust/"
TRANSFER = "/admin/ledger/funding/transfer/"


def available(actor) -> Decimal:
    return wallet_balances(merchant=actor.merchant)["available"]


def credit(actor, amount: str) -> None:
    wallet_admin_credit(merchant=actor.merchant, amount=Decimal(amount), reason="opening")


def audit_of(merchant: Merchant) -> list[str]:
    entries = LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Merchant), object_id=str(merchant.pk)
    ).order_by("pk")
    assert all(entry.action_flag == CHANGE for entry in entries)
    return [entry.get_change_message() for entry in entries]


def adjust(staff, actor, direction: str, amount: str, reason: str = "chargeback 42"):
    return staff.post(
        ADJUST,
        {
            "merchant": str(actor.merchant.pk),
            "direction": direction,
            "amount": amount,
            "reason": reason,
        },
    )


def transfer(staff, source, target, amount: str, reason: str = "account merge"):
    return staff.post(
        TRANSFER,
        {
            "source": str(source.merchant.pk),
            "target": str(target.merchant.pk),
            "amount": amount,
            "reason": reason,
        },
    )


class TestFundingsPage:
    def test_lists_filters_and_searches_fundings(self, staff, alice, bob):
        deposit = fund(alice, type="DEPOSIT", txn_hash="0xdeadbeef")
        withdrawal = fund(bob, type="WITHDRAWAL", status="PENDING")

        everything = staff.get(FUNDINGS).content.decode()
        deposits = staff.get(FUNDINGS, {"type__exact": "DEPOSIT"}).content.decode()
        pending = staff.get(FUNDINGS, {"status__exact": "PENDING"}).content.decode()
        searched = staff.get(FUNDINGS, {"q": "0xdeadbeef"}).content.decode()

        assert str(deposit.id) in everything
        assert str(withdrawal.id) in everything
        assert str(deposit.id) in deposits
        assert str(withdrawal.id) not in deposits
        assert str(withdrawal.id) in pending
        assert str(deposit.id) not in pending
        assert str(deposit.id) in searched
        assert str(withdrawal.id) not in searched

    def test_the_page_offers_the_staff_moves(self, staff):
        page = staff.get(FUNDINGS).content.decode()

        assert ADJUST in page
        assert TRANSFER in page
        assert staff.get(ADJUST).status_code == 200
        assert staff.get(TRANSFER).status_code == 200

    def test_a_funding_cannot_be_edited_added_or_deleted(self, staff, alice):
        funding = fund(alice, amount="10.00")
        url = f"{FUNDINGS}{funding.pk}/change/"

        assert staff.get(url).status_code == 200  # view only
        staff.post(url, {"amount_usd": "999.00", "status": "FAILED"})
        assert staff.get(f"{FUNDINGS}add/").status_code == 403
        assert staff.post(f"{FUNDINGS}{funding.pk}/delete/", {"post": "yes"}).status_code == 403
        funding.refresh_from_db()
        assert (funding.amount_usd, funding.status) == (Decimal("10.00"), "COMPLETED")

    def test_wallet_transfers_and_accounts_are_read_only(self, staff, alice):
        credit(alice, "10.00")
        row = Transfer.objects.get()

        assert staff.get(f"/admin/wallet/transfer/{row.pk}/change/").status_code == 200
        staff.post(f"/admin/wallet/transfer/{row.pk}/change/", {"memo": "edited"})
        row.refresh_from_db()
        assert row.memo == "opening"
        assert not LogEntry.objects.exists()


class TestCreditAndDebit:
    def test_a_credit_adds_spendable_money_and_is_audited(self, staff, api, alice):
        response = adjust(staff, alice, "credit", "25.50", reason="goodwill for ticket 7")

        assert response.status_code == 302
        assert available(alice) == Decimal("25.50")
        posted = Transfer.objects.get(kind="ADMIN_CREDIT")
        assert posted.memo == "goodwill for ticket 7"
        [entry] = LogEntry.objects.all()
        assert entry.user.username == "ops"
        assert entry.object_id == str(alice.merchant.pk)
        assert entry.get_change_message() == (
            f"ADMIN_CREDIT 25.50 USD ({posted.id}): goodwill for ticket 7"
        )
        [row] = ledger(api, alice)["items"]
        assert (row["id"], row["type"], row["amount"]["usd"]) == (
            str(posted.id),
            "ADMIN_CREDIT",
            Decimal("25.50"),
        )
        assert ledger(api, alice, type="ADMIN_CREDIT")["items"] == [row]
        assert wallet_invariants_check().clean

    def test_the_form_says_where_the_merchant_finds_the_row(self, staff):
        page = staff.get(ADJUST).content.decode()

        assert "ADMIN_CREDIT or ADMIN_DEBIT row of its ledger" in page
        assert "type=ADMIN_CREDIT" in page

    def test_a_debit_takes_money_out_and_is_audited(self, staff, api, alice):
        credit(alice, "100.00")

        response = adjust(staff, alice, "debit", "40.00")

        assert response.status_code == 302
        assert available(alice) == Decimal("60.00")
        posted = Transfer.objects.get(kind="ADMIN_DEBIT")
        assert audit_of(alice.merchant) == [f"ADMIN_DEBIT 40.00 USD ({posted.id}): chargeback 42"]
        assert ledger(api, alice)["items"][0]["type"] == "ADMIN_DEBIT"
        assert wallet_invariants_check().clean

    def test_a_debit_beyond_the_available_balance_is_refused_clearly(self, staff, alice):
        credit(alice, "30.00")

        response = adjust(staff, alice, "debit", "30.01")

        assert response.status_code == 200
        page = response.content.decode()
        assert "has 30.00 USD available" in page
        assert "cannot take a spendable balance below zero" in page
        assert available(alice) == Decimal("30.00")
        assert not Transfer.objects.filter(kind="ADMIN_DEBIT").exists()
        assert not LogEntry.objects.exists()
        assert wallet_invariants_check().clean

    def test_a_debit_cannot_use_locked_money(self, staff, alice):
        from wallet.services import wallet_lock

        credit(alice, "30.00")
        wallet_lock(merchant=alice.merchant, amount=Decimal(20), cause_type="t", cause_id="x")

        assert adjust(staff, alice, "debit", "20.00").status_code == 200
        assert adjust(staff, alice, "debit", "10.00").status_code == 302
        assert wallet_balances(merchant=alice.merchant)["locked"] == Decimal("20.00")

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("reason", ""),
            ("reason", "   "),
            ("amount", "0"),
            ("amount", "-5"),
            ("amount", "1.001"),
            ("amount", "1000000000000"),
            ("direction", "steal"),
        ],
    )
    def test_bad_input_writes_nothing(self, staff, alice, field, value):
        posted = {"merchant": str(alice.merchant.pk), "direction": "credit", "amount": "5"}
        posted["reason"] = "r"
        posted[field] = value

        response = staff.post(ADJUST, posted)

        assert response.status_code == 200
        assert field in response.context["form"].errors
        assert not Transfer.objects.exists()
        assert not LogEntry.objects.exists()

    def test_the_confirmation_names_the_move(self, staff, alice):
        response = adjust(staff, alice, "credit", "5.00")

        shown = [str(m) for m in get_messages(response.wsgi_request)]
        assert shown == [f"ADMIN_CREDIT of 5.00 USD to {alice.merchant.name}."]


class TestInternalTransfer:
    def test_moves_money_between_merchants_with_a_funding_each_side(self, staff, api, alice, bob):
        credit(alice, "100.00")

        response = transfer(staff, alice, bob, "35.00")

        assert response.status_code == 302
        assert available(alice) == Decimal("65.00")
        assert available(bob) == Decimal("35.00")
        sent = Funding.objects.get(merchant=alice.merchant)
        received = Funding.objects.get(merchant=bob.merchant)
        assert sent.source_id == received.source_id
        alices_row = ledger(api, alice)["items"][0]
        assert (alices_row["id"], alices_row["amount"]["usd"]) == (str(sent.id), Decimal("-35.00"))
        [bobs_row] = ledger(api, bob)["items"]
        assert (bobs_row["id"], bobs_row["type"], bobs_row["amount"]["usd"]) == (
            str(received.id),
            "INTERNAL_TRANSFER",
            Decimal("35.00"),
        )
        moved = sent.source_id
        assert audit_of(alice.merchant) == [
            f"INTERNAL_TRANSFER 35.00 USD to {bob.merchant} ({moved}): account merge"
        ]
        assert audit_of(bob.merchant) == [
            f"INTERNAL_TRANSFER 35.00 USD from {alice.merchant} ({moved}): account merge"
        ]
        assert Transfer.objects.get(kind="INTERNAL_TRANSFER").memo == "account merge"
        assert wallet_invariants_check().clean

    def test_a_transfer_that_would_overdraw_the_sender_is_refused(self, staff, alice, bob):
        credit(alice, "10.00")

        response = transfer(staff, alice, bob, "10.01")

        assert response.status_code == 200
        assert f"{alice.merchant.name} has 10.00 USD available" in response.content.decode()
        assert available(alice) == Decimal("10.00")
        assert available(bob) == Decimal("0.00")
        assert not Funding.objects.exists()
        assert not LogEntry.objects.exists()
        assert wallet_invariants_check().clean

    def test_a_merchant_cannot_send_to_itself(self, staff, alice):
        credit(alice, "10.00")

        response = transfer(staff, alice, alice, "1.00")

        assert response.status_code == 200
        assert "target" in response.context["form"].errors
        assert not Funding.objects.exists()

    def test_the_reason_is_required(self, staff, alice, bob):
        credit(alice, "10.00")

        response = transfer(staff, alice, bob, "1.00", reason="")

        assert "reason" in response.context["form"].errors
        assert available(alice) == Decimal("10.00")


class TestPermissions:
    @pytest.fixture
    def viewer(self, client):
        """Staff who may look at fundings but not move money."""
        user = get_user_model().objects.create_user("viewer", password="pw-viewer-1", is_staff=True)
        user.user_permissions.add(Permission.objects.get(codename="view_funding"))
        client.force_login(user)
        return client

    def test_staff_without_the_permission_cannot_move_money(self, viewer, alice, bob):
        credit(alice, "50.00")

        assert viewer.get(FUNDINGS).status_code == 200
        assert ADJUST not in viewer.get(FUNDINGS).content.decode()
        assert viewer.get(ADJUST).status_code == 403
        assert adjust(viewer, alice, "debit", "10.00").status_code == 403
        assert transfer(viewer, alice, bob, "10.00").status_code == 403
        assert available(alice) == Decimal("50.00")

    def test_the_move_money_permission_is_enough(self, client, alice):
        user = get_user_model().objects.create_user("cashier", password="pw-cash-12", is_staff=True)
        user.user_permissions.add(Permission.objects.get(codename="move_money"))
        client.force_login(user)

        assert adjust(client, alice, "credit", "3.00").status_code == 302
        assert available(alice) == Decimal("3.00")

    def test_anonymous_users_are_sent_to_the_login(self, client, alice):
        response = adjust(client, alice, "credit", "3.00")

        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]
        assert not Transfer.objects.exists()


def test_the_audit_log_page_lists_staff_actions(staff, alice):
    adjust(staff, alice, "credit", "5.00", reason="visible in the audit log")

    page = staff.get("/admin/admin/logentry/").content.decode()

    assert "visible in the audit log" in page
    entry = LogEntry.objects.get()
    assert staff.get(f"/admin/admin/logentry/{entry.pk}/delete/").status_code == 403
