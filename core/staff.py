"""Who asks for a staff action and why: every service a staff member calls from the console takes
one ``Staff`` and records both with what it did (docs/admin.md, "Staff actions")."""

from dataclasses import dataclass

from core.errors import DomainError

REASON_MAX = 500


@dataclass(frozen=True)
class Staff:
    """A staff member (their console user name) and the reason they gave. A reason is required:
    the record is read later by someone who was not there."""

    user: str
    reason: str

    def __post_init__(self) -> None:
        if not self.user:
            raise DomainError("VALIDATION_FAILED", "A staff action names its staff user.")
        reason = " ".join(self.reason.split())
        if not reason:
            raise DomainError("VALIDATION_FAILED", "Give a reason: it is kept with the action.")
        if len(reason) > REASON_MAX:
            raise DomainError("VALIDATION_FAILED", f"A reason is {REASON_MAX} characters at most.")
        object.__setattr__(self, "reason", reason)

    @property
    def actor(self) -> str:
        """How the trade's events and the audit name them (``TradeEvent.actor``)."""
        return f"staff:{self.user}"
