"""What a lower layer asks of the apps above it, declared as ports: each names the members it must
have, the app that owns the answer implements them and binds each with one typed ``bind`` in its
``AppConfig.ready``, and ``manage.py check`` fails while one is missing (``core.checks``), so a
missing implementation stops the start instead of failing a task at run time. A use of a member
nothing implements raises ``UnboundPortError`` naming the port and the member.

Ports whose members any app may add without being asked (the metrics read at scrape time, the
console's board sections and merchant panels) are plain lists beside what reads them."""

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Generic, TypeVar

from django.core.exceptions import ImproperlyConfigured

Member = TypeVar("Member", bound=Hashable)
Implementation = TypeVar("Implementation")


class UnboundPortError(LookupError):
    """A port used for a member no app implements (``manage.py check`` reports it first)."""


class Port(Generic[Member, Implementation]):
    """The members a port requires and what implements each. ``bindings`` is the state bound at
    start-up: tests take a member out (or put a stand-in in) with ``monkeypatch.setitem`` on it."""

    def __init__(self, name: str, *, check_id: str, required: Iterable[Member] = ()) -> None:
        self.name = name
        self.check_id = check_id
        # In declaration order: the wallet's checks report in it.
        self.required: dict[Member, None] = dict.fromkeys(required)
        self.bindings: dict[Member, Implementation] = {}

    def require(self, member: Member) -> None:
        self.required[member] = None

    def bind(self, member: Member, implementation: Implementation) -> None:
        if member not in self.required:
            raise ImproperlyConfigured(f"{self.name}: {member} is not a member it requires")
        bound = self.bindings.get(member)
        if bound is not None and bound is not implementation:
            raise ImproperlyConfigured(f"{self.name}: {member} is bound twice")
        self.bindings[member] = implementation

    def implementation(self, member: Member) -> Implementation:
        try:
            return self.bindings[member]
        except KeyError:
            raise UnboundPortError(f"{self.name}: nothing implements {member}") from None

    def implementations(self) -> list[tuple[Member, Implementation]]:
        """Every member with its implementation: one unbound raises, never is skipped."""
        members = [*self.required, *(m for m in self.bindings if m not in self.required)]
        return [(member, self.implementation(member)) for member in members]

    def missing(self) -> list[Member]:
        return [member for member in self.required if member not in self.bindings]


@dataclass(frozen=True)
class ApprovalSubject:
    """How the app that asked a merchant's approval takes the answer: both parts together (one
    without the other was a ``KeyError`` when a delivery ran again)."""

    # (subject_id, outcome, reason), run in the transaction that records the merchant's answer.
    resolve: Callable[[str, str, str], None]
    # (subject_id): hands on again the work an answered approval made due, for a delivery run
    # again after its first run died past the answer (that work is idempotent).
    resume: Callable[[str], None]


# The outbox's approval events, by subject type: a withdrawal's (trading), a cashout's (crypto).
APPROVAL_SUBJECTS: Port[str, ApprovalSubject] = Port(
    "approval subjects", check_id="core.E001", required=("trade", "crypto_withdrawal")
)


@dataclass(frozen=True)
class LockHolding:
    """What one kind of holder (withdrawals, cashouts) keeps locked, per merchant id, and the
    holders that should not hold anything any more."""

    by_merchant: dict[str, Decimal]
    stale: list[str]


# The wallet's invariant check asks the apps that hold money what explains each balance.
# Who keeps merchants' money locked: trading's withdrawals, crypto's cashouts.
LOCK_HOLDERS: Port[str, Callable[[], LockHolding]] = Port(
    "wallet lock holders", check_id="core.E002", required=("withdrawals", "cashouts")
)
# Account kind -> the balance each account of that kind should have, by merchant id (None for the
# service's own account): the deposits' escrow, collateral and the provider's advances.
HELD_BALANCES: Port[str, Callable[[], dict[str | None, Decimal]]] = Port(
    "wallet held balances",
    check_id="core.E003",
    required=("escrow", "collateral", "provider_collateral"),
)
# Value credited for assets stands on each asset once: an asset in two live deposits at once,
# and a credit without exactly one asset behind it (name -> problems).
SHARED_ASSETS: Port[str, Callable[[], list[str]]] = Port(
    "wallet shared assets", check_id="core.E004", required=("deposits",)
)
DOUBLED_CREDITS: Port[str, Callable[[], list[str]]] = Port(
    "wallet doubled credits", check_id="core.E005", required=("deposits",)
)
