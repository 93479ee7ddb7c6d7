"""The ports' system check: ``manage.py check`` (and so every process's start and the test run's)
fails while a member a port requires has no implementation bound, naming the port and the
member, instead of the first task that needs it failing at run time."""

from typing import Any

from django.core import checks

from core.handoffs import HANDOFFS
from core.ports import (
    APPROVAL_SUBJECTS,
    DOUBLED_CREDITS,
    HELD_BALANCES,
    LOCK_HOLDERS,
    SHARED_ASSETS,
    Port,
)

PORTS: tuple[Port[Any, Any], ...] = (
    APPROVAL_SUBJECTS,
    LOCK_HOLDERS,
    HELD_BALANCES,
    SHARED_ASSETS,
    DOUBLED_CREDITS,
    HANDOFFS,
)
PORTS_TAG = "ports"


@checks.register(PORTS_TAG)
def ports_bound_check(**kwargs: Any) -> list[checks.CheckMessage]:
    return [
        checks.Error(
            f"{port.name}: nothing implements {', '.join(str(member) for member in missing)}",
            hint="The app that owns it binds it in its AppConfig.ready (docs/architecture.md).",
            id=port.check_id,
        )
        for port in PORTS
        if (missing := port.missing())
    ]
