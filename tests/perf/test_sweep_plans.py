"""Every periodic sweep finds its due rows through its own index, however big its table grows:
checked on the plans PostgreSQL makes for the sweeps' own statements (caught as each sweep sends
its first one, tests/perf/plans.py) over tables of tens of thousands of rows, made by
generate_series and ANALYZEd, a handful of them due, where a sequential scan would be the
planner's choice without the index. bench/scale.py measures the same at ten million trades."""

import pytest
from django.db import connection

from merchants.models import IdempotentRequest
from merchants.webhooks.models import WebhookEvent
from tests.admin.volume import cycle, rows_fill
from tests.factories import make_actor
from tests.perf.plans import plan_of, reads, selection, sweep_statements
from tests.perf.sweeps import SWEEPS
from trading.models import Trade, TradeEvent, TradeItem

pytestmark = pytest.mark.django_db

TRADES, IN_FLIGHT, ROWS = 40_000, 400, 40_000
# Row n's trade, so that its item and events can name it.
TRADE_ID = "('00000000-0000-4000-8000-' || lpad(to_hex({n}), 12, '0'))::uuid"


@pytest.fixture
def volume(db: None) -> None:
    """Trades 30 minutes apart over 830 days, half withdrawals, half deposits, the newest
    ``IN_FLIGHT`` in flight (a few of each sweep's due among them), each with one item and
    three events; webhook events over 100 days (one in 500 waiting); idempotency keys over two
    days (those of the first day expired)."""
    merchant = str(make_actor(name="Volume").merchant.pk)
    live = f"n <= {IN_FLIGHT}"
    states = cycle(["pending", "active", "hold", "initiated"])
    status = f"CASE WHEN {live} THEN {states} ELSE 'completed' END"
    created = "(now() - n * interval '30 minutes')"
    rows_fill(
        Trade,
        TRADES,
        id=TRADE_ID.format(n="n"),
        merchant=f"'{merchant}'",
        type=cycle(["withdraw", "deposit"]),
        source="'self'",
        status=status,
        game="730",
        client_platform_id="'76561197960265729'",
        client_trade_url="''",
        total_price="10.50",
        created_at=created,
        updated_at=f"CASE WHEN {live} AND mod(n, 8) <> 3 THEN now() ELSE {created} END",
        # Every withdrawal keeps its deadline once it ends; the index holds live ones only.
        auto_cancel_at=f"CASE WHEN mod(n, 2) = 0 THEN {created} + interval '3 hours' END",
        hold_end_date=f"CASE WHEN {status} = 'hold' THEN now() + mod(n, 3) * interval '1 day'"
        " - interval '1 hour' END",
        offer_expires_at=f"CASE WHEN {live} AND mod(n, 4) = 1 THEN now() - interval '1 minute' END",
    )
    rows_fill(
        TradeItem,
        TRADES,
        trade=TRADE_ID.format(n="n"),
        position="0",
        public_id="n::text",
        status=status,
        appid="730",
        amount="1",
        tradable="true",
        price="10.50",
        locked="0",
        delivery="'standard'",
        details="'{}'::jsonb",
        purchase_ref="CASE WHEN mod(n, 8) = 0 THEN '' ELSE 'order-' || n END",
        cancel_requested_at=f"CASE WHEN {live} AND mod(n, 16) = 4"
        " THEN now() - interval '1 hour' END",
        hold_end_date=f"CASE WHEN {status} = 'hold' THEN now() + mod(n, 3) * interval '1 day'"
        " - interval '1 hour' END",
        updated_at=created,
    )
    rows_fill(
        TradeEvent,
        3 * TRADES,
        trade=TRADE_ID.format(n="(1 + (n - 1) / 3)"),
        kind="'moved'",
        from_status=cycle(["initiated", "pending", "active"]),
        to_status=cycle(["pending", "active", "completed"]),
        actor="'system'",
        detail="'{}'::jsonb",
        created_at="now() - (n / 3) * interval '30 minutes'",
    )
    rows_fill(
        WebhookEvent,
        ROWS,
        merchant=f"'{merchant}'",
        type="'trade.completed'",
        subject_type="'trade'",
        subject_id="n::text",
        sequence="1",
        payload="'{}'::jsonb",
        status="CASE WHEN mod(n, 500) = 1 THEN 'pending' ELSE 'delivered' END",
        attempts="CASE WHEN mod(n, 500) = 1 THEN 0 ELSE 1 END",
        next_attempt_at="CASE WHEN mod(n, 500) = 1 THEN now() END",
        created_at="now() - n * interval '216 seconds'",
    )
    rows_fill(
        IdempotentRequest,
        ROWS,
        merchant=f"'{merchant}'",
        caller="'merchant'",
        key="n::text",
        fingerprint="md5(n::text)",
        claim="gen_random_uuid()",
        request_id="'req-' || n",
        created_at="now() - n * interval '4 seconds'",
        expires_at="now() - n * interval '4 seconds' + interval '1 day'",
    )
    with connection.cursor() as cursor:
        for table in (Trade, TradeItem, TradeEvent, WebhookEvent, IdempotentRequest):
            cursor.execute(f"ANALYZE {table._meta.db_table}")


def test_each_sweep_reads_its_index_not_its_table(volume):
    """Every sweep checked in one fill (tens of seconds on PostgreSQL), each wrong plan named;
    a purge by the rows its batch chooses (its delete by primary key after is PostgreSQL's to
    join as it likes)."""
    wrong = []
    for sweep in SWEEPS:
        (statement,) = sweep_statements(sweep.run, table=sweep.table)
        plan = selection(plan_of(statement)["Plan"])
        found = [read for read in reads(plan) if read.table == sweep.table]
        if not found or any(read.how == "Seq Scan" for read in found):
            wrong.append(f"{sweep.name} reads {sweep.table} by {[r.how for r in found]}: {plan}")
        elif sweep.index not in {name for read in found for name in read.indexes}:
            wrong.append(f"{sweep.name} does not read {sweep.index}: {plan}")
    assert not wrong, "\n".join(wrong)

    # Caught at its statement, no sweep changed anything.
    assert Trade.objects.filter(status="completed").count() == TRADES - IN_FLIGHT
    assert WebhookEvent.objects.count() == ROWS
    assert IdempotentRequest.objects.count() == ROWS
