"""The retention of trades' timelines (docs/ops/retention.md): a finished trade's events go
``RETENTION_TRADE_EVENTS_DAYS`` after they were written. The trade, its items and its money
rows stay for ever, and so do the moves into and out of a hold: check_wallet reads them to
prove no unit was credited to two deposits at once (``trading.deposits.selectors``)."""

from datetime import datetime

from django.conf import settings
from django.db import connection

from core.retention import Retention, retention_cutoff, rows_purge
from trading.models import TERMINAL_PRECEDENCE, Trade, TradeEvent

_FINISHED = ", ".join(f"'{status}'" for status in TERMINAL_PRECEDENCE)
# The first two conditions are the predicate of the partial index ``trade_event_purgeable``.
# The trade's status is a subquery per event, not a join: a join lets PostgreSQL hash every
# candidate event and sort them all before taking a batch (bench/retention.py measured it);
# per row, the walk along the index stops after a batch.
FINISHED_TRADE_EVENTS = Retention(
    model=TradeEvent,
    column="created_at",
    condition="t.to_status <> 'hold' AND t.from_status <> 'hold'"  # noqa: S608
    f" AND (SELECT tr.status FROM {connection.ops.quote_name(Trade._meta.db_table)} tr"
    f" WHERE tr.id = t.trade_id) IN ({_FINISHED})",
)


def trade_events_purge(*, now: datetime) -> int:
    cutoff = retention_cutoff(now=now, days=settings.RETENTION_TRADE_EVENTS_DAYS)
    return 0 if cutoff is None else rows_purge(FINISHED_TRADE_EVENTS, before=cutoff)
