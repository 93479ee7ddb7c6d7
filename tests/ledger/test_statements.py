"""Daily statements (docs/admin.md): a merchant's day in UTC from the ledger's postings, in the
staff console and as CSV. Equal to the ledger: each account's opening balance plus the day's
movements is its closing balance, and that is the balance its postings sum to at the day's end,
computed here straight from the postings, for two merchants with movements on several days and
transfers on either side of midnight."""

import csv
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.db.models import Sum

from core import clock
from merchants.models import Merchant
from tests.factories import make_actor
from wallet.models import Account, Posting
from wallet.selectors import Statement, wallet_statement
from wallet.services import Move, account_get, transfer_post

pytestmark = pytest.mark.django_db

DAY_1, DAY_2, DAY_3 = date(2026, 3, 9), date(2026, 3, 10), date(2026, 3, 11)
MIDNIGHT = datetime(2026, 3, 10, tzinfo=UTC)  # DAY_1 ends, DAY_2 starts
TINY = timedelta(microseconds=1)
URL = "/admin/wallet/account/statement/"


def midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def at(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
    """Transfers are stamped with the service clock: it reads ``moment`` from now on."""
    monkeypatch.setattr(clock, "now", lambda: moment)


def world_to(merchant: Merchant, amount: str, kind: str = "ADMIN_CREDIT") -> None:
    transfer_post(
        kind=kind,
        cause_type="admin",
        cause_id=f"credit-{amount}",
        memo="staff credit",
        moves=[
            Move(
                account_get(merchant=None, kind=Account.Kind.WORLD),
                account_get(merchant=merchant, kind=Account.Kind.AVAILABLE),
                Decimal(amount),
            )
        ],
    )


def between(merchant: Merchant, source: str, target: str, amount: str, kind: str) -> None:
    transfer_post(
        kind=kind,
        cause_type="trade_item",
        cause_id="42",
        moves=[
            Move(
                account_get(merchant=merchant, kind=source),
                account_get(merchant=merchant, kind=target),
                Decimal(amount),
            )
        ],
    )


def to_other(source: Merchant, target: Merchant, amount: str) -> None:
    transfer_post(
        kind="INTERNAL_TRANSFER",
        cause_type="funding",
        cause_id="=HYPERLINK(1)",  # a reference a spreadsheet would run as a formula
        memo="-2+3",
        moves=[
            Move(
                account_get(merchant=source, kind=Account.Kind.AVAILABLE),
                account_get(merchant=target, kind=Account.Kind.AVAILABLE),
                Decimal(amount),
            )
        ],
    )


@pytest.fixture
def history(monkeypatch: pytest.MonkeyPatch) -> tuple[Merchant, Merchant]:
    alice, bob = make_actor(name="Alice").merchant, make_actor(name="Bob").merchant
    with monkeypatch.context() as patched:
        at(patched, midnight(DAY_1) - timedelta(days=3))
        world_to(alice, "500.00")
        world_to(bob, "80.00")
        at(patched, midnight(DAY_1) + timedelta(hours=9))
        between(alice, Account.Kind.AVAILABLE, Account.Kind.LOCKED, "30.00", "LOCK")
        at(patched, MIDNIGHT - TINY)  # the last instant of DAY_1
        to_other(alice, bob, "12.34")
        at(patched, MIDNIGHT)  # the first instant of DAY_2
        to_other(bob, alice, "2.01")
        at(patched, MIDNIGHT + TINY)
        between(alice, Account.Kind.LOCKED, Account.Kind.AVAILABLE, "30.00", "UNLOCK")
        at(patched, midnight(DAY_3) - TINY)
        world_to(bob, "0.99")
        at(patched, midnight(DAY_3) + timedelta(hours=1))
        world_to(alice, "7.00")
    return alice, bob


def postings_sum(merchant: Merchant, kind: str, before: datetime) -> Decimal:
    """The account's balance at ``before``, straight from the postings."""
    total = Posting.objects.filter(
        account__merchant=merchant, account__kind=kind, transfer__created_at__lt=before
    ).aggregate(total=Sum("amount"))["total"]
    return total or Decimal("0.00")


def check_equal_to_the_ledger(statement: Statement) -> None:
    for account in statement.accounts:
        moved = [line.amount for line in statement.lines if line.account == account.account]
        assert account.opening + sum(moved, Decimal(0)) == account.closing
        assert account.opening == postings_sum(
            statement.merchant, account.account, statement.starts
        )
        assert account.closing == postings_sum(statement.merchant, account.account, statement.ends)
        running = account.opening
        for line in statement.lines:
            if line.account == account.account:
                running += line.amount
                assert line.balance == running


@pytest.mark.parametrize(
    "day", [DAY_1 - timedelta(days=4), DAY_1, DAY_2, DAY_3, DAY_3 + timedelta(days=1)]
)
def test_every_day_of_both_merchants_equals_the_ledger(history, day):
    for merchant in history:
        check_equal_to_the_ledger(wallet_statement(merchant=merchant, day=day))


def test_a_transfer_belongs_to_the_day_it_was_posted_on_either_side_of_midnight(history):
    alice, bob = history

    first = wallet_statement(merchant=alice, day=DAY_1)
    second = wallet_statement(merchant=alice, day=DAY_2)

    assert [(line.kind, line.account, line.amount) for line in first.lines] == [
        ("LOCK", "available", Decimal("-30.00")),
        ("LOCK", "locked", Decimal("30.00")),
        ("INTERNAL_TRANSFER", "available", Decimal("-12.34")),
    ]
    assert first.lines[-1].at == MIDNIGHT - TINY
    assert [(line.kind, line.account, line.amount) for line in second.lines] == [
        ("INTERNAL_TRANSFER", "available", Decimal("2.01")),
        ("UNLOCK", "available", Decimal("30.00")),
        ("UNLOCK", "locked", Decimal("-30.00")),
    ]
    assert second.lines[0].at == MIDNIGHT
    balances = {a.account: (a.opening, a.closing) for a in first.accounts}
    assert balances["available"] == (Decimal("500.00"), Decimal("457.66"))
    assert balances["locked"] == (Decimal("0.00"), Decimal("30.00"))
    assert {a.account: a.opening for a in second.accounts} == {
        a.account: a.closing for a in first.accounts
    }
    # Bob sees his own side only.
    bobs = wallet_statement(merchant=bob, day=DAY_1)
    assert [(line.kind, line.amount) for line in bobs.lines] == [
        ("INTERNAL_TRANSFER", Decimal("12.34"))
    ]
    assert bobs.lines[0].reference == "funding:=HYPERLINK(1)"


def test_a_day_ending_the_history_closes_at_the_wallets_balance(history):
    for merchant in history:
        statement = wallet_statement(merchant=merchant, day=DAY_3 + timedelta(days=1))
        balances = dict(Account.objects.filter(merchant=merchant).values_list("kind", "balance"))
        for account in statement.accounts:
            assert account.closing == balances.get(account.account, Decimal("0.00"))


def rows(response: Any) -> list[dict[str, str]]:
    return list(csv.DictReader(StringIO(response.content.decode())))


def test_staff_download_the_statement_as_csv(admin_client, history):
    alice, _ = history

    response = admin_client.get(
        URL, {"merchant": str(alice.pk), "day": "2026-03-09", "format": "csv"}
    )

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f"statement-{alice.pk}-2026-03-09.csv" in response["Content-Disposition"]
    lines = rows(response)
    assert {row["merchant"] for row in lines} == {str(alice.pk)}
    assert [row["line"] for row in lines] == ["opening"] * 4 + ["movement"] * 3 + ["closing"] * 4
    opening = {row["account"]: row["balance"] for row in lines if row["line"] == "opening"}
    closing = {row["account"]: row["balance"] for row in lines if row["line"] == "closing"}
    assert opening == {
        "available": "500.00",
        "locked": "0.00",
        "escrow": "0.00",
        "collateral": "0.00",
    }
    assert closing == {
        "available": "457.66",
        "locked": "30.00",
        "escrow": "0.00",
        "collateral": "0.00",
    }
    moved = [row for row in lines if row["line"] == "movement"]
    assert [(r["account"], r["kind"], r["amount"], r["balance"]) for r in moved] == [
        ("available", "LOCK", "-30.00", "470.00"),
        ("locked", "LOCK", "30.00", "30.00"),
        ("available", "INTERNAL_TRANSFER", "-12.34", "457.66"),
    ]
    # Text that a spreadsheet would evaluate is written as text.
    assert moved[-1]["reference"] == "funding:=HYPERLINK(1)"
    assert moved[-1]["memo"] == "'-2+3"
    for account, balance in opening.items():
        total = Decimal(balance) + sum(
            (Decimal(r["amount"]) for r in moved if r["account"] == account), Decimal(0)
        )
        assert total == Decimal(closing[account])


def test_the_page_shows_the_statement_and_its_csv_link(admin_client, history):
    alice, _ = history

    page = admin_client.get(URL, {"merchant": str(alice.pk), "day": "2026-03-10"})

    assert page.status_code == 200
    text = page.content.decode()
    assert "Alice, 2026-03-10 (UTC)" in text
    assert "format=csv" in text
    assert "UNLOCK" in text
    assert "INTERNAL_TRANSFER" in text
    merchant_page = admin_client.get(f"/admin/merchants/merchant/{alice.pk}/change/")
    assert f"{URL}?merchant={alice.pk}" in merchant_page.content.decode()


@pytest.mark.parametrize(
    "query", [{"merchant": "not-a-uuid", "day": "2026-03-09"}, {"day": "2026-02-30"}, {}]
)
def test_a_bad_merchant_or_day_shows_the_form_with_its_error(admin_client, history, query):
    response = admin_client.get(URL, {**query, "format": "csv"})

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert response.context["statement"] is None


def test_only_staff_allowed_to_view_accounts_see_statements(client, history):
    alice, _ = history
    query = {"merchant": str(alice.pk), "day": "2026-03-09", "format": "csv"}
    assert client.get(URL, query).status_code == 302  # to the login page

    staff = User.objects.create_user("support", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get(URL, query).status_code == 403

    staff.user_permissions.add(Permission.objects.get(codename="view_account"))
    staff = User.objects.get(pk=staff.pk)  # permissions are cached per instance
    client.force_login(staff)
    assert client.get(URL, query).status_code == 200
