"""What of trading needs a person, for the console's home: trades past their state's expected
time, the bots by state, the suppliers switched off, failing or low on money.

A trade waits "too long" when it has not moved for longer than its kind and state are expected
to take (``CONSOLE_EXPECTED_MINUTES``); in its hold, when the hold ended that long ago and the
hold sweep has not completed it. Each count is one range of a partial index that holds only the
trades in flight (``trade_in_flight_since``, ``trade_hold_end``), so its cost follows the trades
waiting, not the ten million behind them (tests/admin/test_board_plans.py,
bench/admin_board.py)."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Min, Q, QuerySet

from trading.models import IN_FLIGHT, Status, SteamBot, Supplier, Trade

WATCHED = tuple(f"{kind}.{status}" for kind in Trade.Type.values for status in IN_FLIGHT)


@dataclass(frozen=True)
class Overdue:
    """Trades of one kind and state past its expected time: how many, the threshold, and the
    time the oldest of them last moved (its hold's end, for a hold)."""

    key: str  # "<type>.<status>"
    count: int
    minutes: int
    oldest: datetime | None


def expected_minutes(key: str) -> int:
    return int(settings.CONSOLE_EXPECTED_MINUTES[key])


def overdue_condition(*, key: str, now: datetime) -> Q:
    """The trades of ``key`` (``withdraw.pending``, ...) waiting past its expected time."""
    if key not in WATCHED:
        raise ValueError(f"not a state trades wait in: {key}")
    kind, status = key.split(".")
    cutoff = now - timedelta(minutes=expected_minutes(key))
    if status == Status.HOLD:
        return Q(type=kind, status=status, hold_end_date__lt=cutoff)
    return Q(type=kind, status=status, updated_at__lt=cutoff)


def trades_overdue(*, key: str, now: datetime) -> QuerySet[Trade]:
    return Trade.objects.filter(overdue_condition(key=key, now=now))


def trades_overdue_counts(*, now: datetime) -> list[Overdue]:
    """Every kind and state trades wait in, with its count (0 included)."""
    counted = []
    for key in WATCHED:
        moved = "hold_end_date" if key.endswith(f".{Status.HOLD}") else "updated_at"
        found = trades_overdue(key=key, now=now).aggregate(n=Count("*"), oldest=Min(moved))
        counted.append(Overdue(key, found["n"], expected_minutes(key), found["oldest"]))
    return counted


def steam_bots_by_state() -> dict[str, int]:
    """Enabled bots per state (every state present), and the switched-off ones as
    ``disabled``."""
    counts = {str(state): 0 for state in SteamBot.State.values}
    rows = (
        SteamBot.objects.filter(enabled=True).values_list("state").annotate(n=Count("*")).order_by()
    )
    counts.update(dict(rows))
    counts["disabled"] = SteamBot.objects.filter(enabled=False).count()
    return counts


# A supplier is down after this many failed calls in a row (the supplier page says the same).
DOWN_AFTER_FAILURES = 3


def suppliers_switched_off() -> QuerySet[Supplier]:
    return Supplier.objects.filter(enabled=False)


def suppliers_down() -> QuerySet[Supplier]:
    return Supplier.objects.filter(enabled=True, consecutive_failures__gte=DOWN_AFTER_FAILURES)


def suppliers_low(*, below: Decimal | None = None) -> QuerySet[Supplier]:
    """Switched-on suppliers whose balance, as last read, is under ``below`` (the setting)."""
    floor = settings.CONSOLE_SUPPLIER_LOW_BALANCE if below is None else below
    return Supplier.objects.filter(Q(balance__lt=floor), enabled=True)
