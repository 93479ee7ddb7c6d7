"""The console's home stays fast however many trades there are: each count it makes over a
table that grows (trades, webhook events, cashouts) reads a partial index of the rows that can
need a person, never the table. Checked on the plans PostgreSQL makes for the board's own
statements, over enough rows (made by generate_series, then ANALYZEd) that a table scan would
be the planner's choice without the indexes. bench/admin_board.py times it at ten million."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from core.admin_board import board_build
from crypto.models import CryptoWithdrawal
from merchants.webhooks.models import WebhookEvent
from tests.admin.volume import cycle, rows_fill, trade_columns
from tests.factories import make_actor
from trading.models import Trade

pytestmark = pytest.mark.django_db

TRADES, IN_FLIGHT = 200_000, 2_000
EVENTS, CASHOUTS = 100_000, 50_000
# The growing tables and the indexes the board's counts read (partial ones, of the rows that
# may need a person; the deposits waiting for their offer have one of their own).
INDEXES = {
    "trading_trade": {"trade_in_flight_since", "trade_hold_end", "trade_deposit_offer_waiting"},
    "merchants_webhookevent": {"webhook_event_failed", "webhook_event_due"},
    "crypto_cryptowithdrawal": {"withdrawal_waiting"},
}


@contextmanager
def plans() -> Iterator[list[dict[str, Any]]]:
    """The plan of every SELECT run inside: EXPLAIN's of the same statement and parameters."""
    found: list[dict[str, Any]] = []

    def explain(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if sql.lstrip().upper().startswith("SELECT"):
            raw = context["cursor"].cursor
            raw.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            plan = raw.fetchone()[0]
            found.append((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(explain):
        yield found


def _indexes_under(node: dict[str, Any]) -> set[str]:
    found = {node["Index Name"]} if "Index Name" in node else set()
    for child in node.get("Plans", []):
        found |= _indexes_under(child)
    return found


def reads(node: dict[str, Any]) -> Iterator[tuple[str, str, set[str]]]:
    """(how, table, indexes) of each read of a table in a plan; a bitmap heap scan reads
    through the bitmap index scans under it, a sequential scan through none."""
    if "Relation Name" in node:
        how = node["Node Type"]
        if how == "Bitmap Heap Scan":
            indexes = _indexes_under(node)
        else:
            indexes = {node["Index Name"]} if "Index Name" in node else set()
        yield how, node["Relation Name"], indexes
    for child in node.get("Plans", []):
        yield from reads(child)


@pytest.fixture
def history(db: None) -> None:
    merchant = str(make_actor(name="Volume").merchant.pk)
    rows_fill(Trade, TRADES, **trade_columns(merchant_id=merchant, in_flight=IN_FLIGHT))
    rows_fill(
        WebhookEvent,
        EVENTS,
        merchant=f"'{merchant}'",
        type="'trade.completed'",
        subject_type="'trade'",
        subject_id="n::text",
        sequence="1",
        payload="'{}'::jsonb",
        # One in 200 given up on, one in 500 waiting for its next attempt.
        status="CASE WHEN mod(n, 200) = 0 THEN 'failed' WHEN mod(n, 500) = 1 THEN 'pending' "
        "ELSE 'delivered' END",
        attempts="CASE WHEN mod(n, 500) = 1 THEN 0 ELSE 1 END",
        next_attempt_at="CASE WHEN mod(n, 500) = 1 THEN now() END",
        created_at="now() - n * interval '10 seconds'",
    )
    rows_fill(
        CryptoWithdrawal,
        CASHOUTS,
        merchant=f"'{merchant}'",
        platform_id="'76561197960265729'",
        source="'self'",
        request_id="'req-' || n",
        chain="'ETH'",
        token="'USDC'",
        address="'0x000000000000000000000000000000000000dEaD'",
        amount_cents="2500",
        fee_cents="100",
        receive_cents="2400",
        locked="0",
        status="CASE WHEN n <= 30 THEN "
        + cycle(["in_review", "approved", "awaiting_approval"])
        + " ELSE 'completed' END",
        created_at="now() - n * interval '1 minute'",
        updated_at="now() - n * interval '1 minute'",
    )
    with connection.cursor() as cursor:
        for table in INDEXES:
            cursor.execute(f"ANALYZE {table}")


def test_every_count_of_the_board_reads_an_index_not_the_table(history):
    with plans() as found:
        board_build()

    read: dict[str, set[str]] = {table: set() for table in INDEXES}
    for plan in found:
        for how, table, indexes in reads(plan):
            if table in INDEXES:
                assert indexes, f"{table} read by {how}, through no index: {plan}"
                assert indexes <= INDEXES[table], plan
                read[table] |= indexes
    assert read == INDEXES


def test_the_list_a_count_opens_reads_the_index_too(history, admin_client):
    with plans() as found:
        page = admin_client.get("/admin/trading/trade/", {"overdue": "withdraw.pending"})
    assert page.status_code == 200

    trade_reads = [read for plan in found for read in reads(plan) if read[1] == "trading_trade"]
    assert trade_reads
    assert all(indexes == {"trade_in_flight_since"} for _, _, indexes in trade_reads), found


def test_the_list_of_every_trade_reads_the_newest_first(history, admin_client):
    """The page a click on "Trades" opens: its rows from the newest-first index, its total from
    the statistics, no month list asked of the table."""
    with plans() as found:
        page = admin_client.get("/admin/trading/trade/")
    assert page.status_code == 200
    assert page.context["cl"].result_count >= TRADES * 0.9  # the estimate, about right

    trade_reads = [read for plan in found for read in reads(plan) if read[1] == "trading_trade"]
    assert trade_reads == [("Index Scan", "trading_trade", {"trade_newest"})], found
