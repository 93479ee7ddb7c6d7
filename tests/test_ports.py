"""What one app asks of another is a port declared in core, bound by the app that owns the
answer: the start-up check passes on the project as it is, names what is missing when an
implementation is not bound, and a use of an unbound member says which one."""

from typing import Any

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from core.checks import PORTS, PORTS_TAG, ports_bound_check
from core.handoffs import HANDOFFS, handoff_on_commit
from core.ports import (
    APPROVAL_SUBJECTS,
    HELD_BALANCES,
    LOCK_HOLDERS,
    ApprovalSubject,
    Port,
    UnboundPortError,
)
from trading.withdrawals.services.lifecycle import PURCHASE
from wallet.models import Account
from wallet.selectors import wallet_invariants_check


def test_every_port_of_the_project_is_bound():
    assert checks.run_checks(tags=[PORTS_TAG]) == []
    assert all(port.bindings for port in PORTS)


@pytest.mark.parametrize(
    ("port", "member", "check_id", "named"),
    [
        (APPROVAL_SUBJECTS, "crypto_withdrawal", "core.E001", "crypto_withdrawal"),
        (APPROVAL_SUBJECTS, "trade", "core.E001", "trade"),
        (LOCK_HOLDERS, "cashouts", "core.E002", "cashouts"),
        (HELD_BALANCES, "escrow", "core.E003", "escrow"),
        (HANDOFFS, PURCHASE, "core.E006", "trading.withdrawal_purchase"),
    ],
)
def test_an_unbound_member_fails_the_check_by_name(
    monkeypatch: pytest.MonkeyPatch, port: Port[Any, Any], member: Any, check_id: str, named: str
):
    monkeypatch.delitem(port.bindings, member)

    (error,) = ports_bound_check()

    assert error.level == checks.ERROR
    assert error.id == check_id
    assert error.msg == f"{port.name}: nothing implements {named}"


@pytest.mark.django_db
def test_a_use_of_an_unbound_member_names_it(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
):
    monkeypatch.delitem(APPROVAL_SUBJECTS.bindings, "crypto_withdrawal")
    monkeypatch.delitem(HANDOFFS.bindings, PURCHASE)

    with pytest.raises(UnboundPortError, match="approval subjects: nothing implements crypto_w"):
        APPROVAL_SUBJECTS.implementation("crypto_withdrawal")
    with (
        pytest.raises(UnboundPortError, match="hand-offs to workers: nothing implements trading"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        handoff_on_commit(PURCHASE, "trade-1")


@pytest.mark.django_db
def test_the_wallet_check_does_not_skip_an_unbound_holder(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delitem(LOCK_HOLDERS.bindings, "withdrawals")

    with pytest.raises(UnboundPortError, match="wallet lock holders: nothing implements withd"):
        wallet_invariants_check()


def test_a_port_binds_only_its_members_and_each_once():
    port: Port[str, ApprovalSubject] = Port("test subjects", check_id="test.E001", required=["a"])
    subject = ApprovalSubject(resolve=lambda *answer: None, resume=lambda subject_id: None)
    other = ApprovalSubject(resolve=lambda *answer: None, resume=lambda subject_id: None)

    with pytest.raises(ImproperlyConfigured, match="test subjects: b is not a member"):
        port.bind("b", subject)
    assert port.missing() == ["a"]
    port.bind("a", subject)
    port.bind("a", subject)  # the same binding again changes nothing
    with pytest.raises(ImproperlyConfigured, match="test subjects: a is bound twice"):
        port.bind("a", other)
    assert port.missing() == []
    assert port.implementations() == [("a", subject)]


def test_the_held_balances_required_are_account_kinds():
    assert set(HELD_BALANCES.required) <= set(Account.Kind.values)
