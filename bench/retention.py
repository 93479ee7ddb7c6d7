"""What the retention purges cost over big tables (docs/ops/retention.md): the outbox
(``merchants_webhookevent`` with one or two delivery attempts per event) and trades' timelines
(``trading_tradeevent``), filled with ``--rows`` rows by INSERT ... SELECT generate_series (not
the ORM), then purged by the service's own code (``core.retention.rows_purge``) batch by batch.

    createdb -h 127.0.0.1 -U postgres trading_retention_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_retention_bench REDIS_URL=... \\
        SECRET_KEY=bench SANDBOX=true .venv/bin/python manage.py migrate
    DATABASE_URL=... REDIS_URL=... SECRET_KEY=bench SANDBOX=true \\
        .venv/bin/python bench/retention.py [--rows 10000000] [--table webhooks|trade_events|both]

The database must be one of its own (its name holds "bench"): the tables are emptied first.
Webhook events are spread evenly over 180 days (half past the 90-day retention; 1 % pending,
never purged; 5 % failed, with a second attempt); trade events five per trade (its moves from
initiated to completed, two of them a hold's, kept for ever) over 1,000 days (27 % past the 730
days). Printed per table: the fill; the plan of one batch; one purge run as beat runs it
(RETENTION_RUN_SECONDS); the rest batch by batch (rows/s, each batch's latency, WAL per row); a
single-row insert beside the purge (as the outbox writes) against the same insert idle; the run
that finds nothing left; sizes before and after. bench/README.md, "Retention", has the figures.
"""

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
AUTO_FIELDS = ("AutoField", "BigAutoField")
WAL_SAMPLE = 10  # batches run under EXPLAIN (ANALYZE, WAL) first


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def sql(statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def insert_select(
    model: Any, source: tuple[str, list[Any]], exprs: dict[str, tuple[str, list[Any]]]
) -> None:
    """``INSERT INTO <model's table> SELECT ... FROM <source>``: each column either the SQL
    expression given for its field (with its parameters) or the field's default."""
    from django.db import connection

    columns, values, params = [], [], []
    for field in model._meta.concrete_fields:
        if field.name not in exprs and field.get_internal_type() in AUTO_FIELDS:
            continue  # the sequence numbers it
        columns.append(connection.ops.quote_name(field.column))
        expression, given = exprs.get(field.name, ("%s", [field.get_default()]))
        if field.name not in exprs:
            given = [field.get_db_prep_save(given[0], connection)]
        values.append(expression)
        params += given
    statement = (
        f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({', '.join(columns)})"
        f" SELECT {', '.join(values)} FROM {source[0]}"
    )
    sql(statement, params + source[1])


def x(expression: str, *params: Any) -> tuple[str, list[Any]]:
    """An SQL expression and its parameters, in the order they appear in it."""
    return expression, list(params)


@contextmanager
def timed(label: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)


def merchants() -> list[Any]:
    from merchants.services import merchant_create

    return [merchant_create(name=f"retention bench {n}") for n in range(2)]


def fill_webhooks(rows: int) -> None:
    import orjson

    from merchants.examples import FAILED_EVENT
    from merchants.webhooks.models import WebhookDelivery, WebhookEvent

    alice, bob = merchants()
    payload = orjson.dumps(FAILED_EVENT["payload"]).decode()
    print(f"  payload: {len(payload)} bytes (the documented trade webhook)")
    # g = 1 is the oldest; rows are inserted in the order they were written.
    created = "now() - ((%s - g) * (180.0 * 86400 / %s)) * interval '1 second'"
    at = (rows, rows)
    with timed(f"{rows:,} events"):
        insert_select(
            WebhookEvent,
            x("generate_series(1, %s) g", rows),
            {
                "id": x("gen_random_uuid()"),
                "merchant": x(
                    "CASE WHEN mod(g, 2) = 0 THEN %s::uuid ELSE %s::uuid END", alice.pk, bob.pk
                ),
                "type": x("'trade.pending'"),
                "subject_type": x("'trade'"),
                "subject_id": x("md5((g / 5)::text)"),
                "sequence": x("1 + mod(g, 5)"),
                "payload": x("%s::jsonb", payload),
                "status": x(
                    "CASE WHEN mod(g, 100) = 0 THEN 'pending'"
                    " WHEN mod(g, 20) = 0 THEN 'failed' ELSE 'delivered' END"
                ),
                "attempts": x("CASE WHEN mod(g, 20) = 0 THEN 2 ELSE 1 END"),
                "next_attempt_at": x(f"CASE WHEN mod(g, 100) = 0 THEN {created} END", *at),
                "created_at": x(created, *at),
                "delivered_at": x(f"CASE WHEN mod(g, 20) <> 0 THEN {created} END", *at),
            },
        )
    with timed("their delivery attempts"):
        insert_select(
            WebhookDelivery,
            x(
                "merchants_webhookevent e CROSS JOIN generate_series(1, 2) a"
                " WHERE a <= e.attempts ORDER BY e.created_at, a"
            ),
            {
                "event": x("e.id"),
                "attempt": x("a"),
                "url": x("'https://merchant.example/hooks'"),
                "status_code": x(
                    "CASE WHEN e.status = 'delivered' AND a = e.attempts THEN 200 ELSE 503 END"
                ),
                "latency_ms": x("40 + a"),
                "response_excerpt": x("'{\"ok\": true}'"),
                "created_at": x("e.created_at + (a - 1) * interval '1 minute'"),
            },
        )


def fill_trade_events(rows: int) -> None:
    from trading.models import Trade, TradeEvent

    alice, bob = merchants()
    trades = rows // 5
    created = "now() - ((%s - g) * (1000.0 * 86400 / %s)) * interval '1 second'"
    with timed(f"{trades:,} trades"):
        insert_select(
            Trade,
            x("generate_series(1, %s) g", trades),
            {
                "id": x("gen_random_uuid()"),
                "merchant": x(
                    "CASE WHEN mod(g, 2) = 0 THEN %s::uuid ELSE %s::uuid END", alice.pk, bob.pk
                ),
                "type": x("'withdraw'"),
                "source": x("'self'"),
                # The newest thousandth still in flight (a hold lasts days).
                "status": x("CASE WHEN g > %s * 0.999 THEN 'hold' ELSE 'completed' END", trades),
                "game": x("730"),
                "client_platform_id": x("'76561197960265829'"),
                "client_trade_url": x("'https://steamcommunity.com/tradeoffer/new/?partner=101'"),
                "total_price": x("10.50"),
                "created_at": x(created, trades, trades),
                "updated_at": x(created, trades, trades),
                "bot_info": x("NULL"),
            },
        )
    moves = (
        "(VALUES (0, '', 'initiated'), (1, 'initiated', 'pending'), (2, 'pending', 'active'),"
        " (3, 'active', 'hold'), (4, 'hold', 'completed')) m(n, from_status, to_status)"
    )
    with timed("their events"):
        insert_select(
            TradeEvent,
            x(
                f"trading_trade t CROSS JOIN {moves} WHERE t.status = 'completed' OR m.n < 4"
                " ORDER BY t.created_at, m.n"
            ),
            {
                "trade": x("t.id"),
                "item": x("NULL"),
                "kind": x("'moved'"),
                "from_status": x("m.from_status"),
                "to_status": x("m.to_status"),
                "actor": x("'system'"),
                "detail": x("'{}'::jsonb"),
                "created_at": x("t.created_at + m.n * interval '1 hour'"),
            },
        )


@contextmanager
def indexes_built_after(tables: tuple[str, ...]) -> Iterator[None]:
    """The tables' indexes (but their primary keys) dropped while they are filled and built
    again after: faster than keeping them up row by row, and the same indexes."""
    found = sql(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i"
        " WHERE i.tablename = ANY(%s) AND i.indexname NOT LIKE '%%_pkey'",
        [list(tables)],
    )
    for name, _ in found:
        sql(f'DROP INDEX "{name}"')
    try:
        yield
    finally:  # also when the fill fails: the next run finds the indexes to measure
        with timed(f"{len(found)} indexes built"):
            for _, definition in found:
                sql(definition)


def sizes(*tables: str) -> str:
    from django.db import connection

    parts = []
    for table in tables:
        (total,) = sql("SELECT pg_total_relation_size(%s)", [table])[0]
        parts.append(f"{table} {total / 2**30:.2f} GiB")
    connection.close()
    return ", ".join(parts)


class Probe(threading.Thread):
    """What the outbox's writer sees meanwhile: one webhook event inserted and committed at a
    time, its latency recorded."""

    def __init__(self, merchant_id: str) -> None:
        super().__init__(daemon=True)
        self.merchant_id = merchant_id
        self.latencies: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        from django.db import connection

        statement = (
            "INSERT INTO merchants_webhookevent (id, merchant_id, type, subject_type, subject_id,"
            " sequence, payload, is_approval, status, attempts, next_attempt_at, created_at,"
            " last_error) VALUES (gen_random_uuid(), %s, 'trade.pending', 'trade', 'probe', 1,"
            " '{}'::jsonb, false, 'delivered', 1, NULL, now(), '')"
        )
        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute(statement, [self.merchant_id])
                self.latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.01)
        finally:
            connection.close()

    def summary(self) -> str:
        found = sorted(self.latencies)
        if not found:
            return "no insert"
        p99 = found[min(len(found) - 1, int(len(found) * 0.99))]
        return f"{len(found)} inserts, p50 {statistics.median(found):.1f} ms, p99 {p99:.1f} ms"


def probe_for(seconds: float, merchant_id: str) -> str:
    probe = Probe(merchant_id)
    probe.start()
    time.sleep(seconds)
    probe.stop.set()
    probe.join()
    return probe.summary()


def explained(statements: list[str], params: list[Any], batches: int) -> tuple[int, int, int]:
    """The first ``batches`` batches run under EXPLAIN ANALYZE (committed, as the purge's own
    would be), the first one's plan printed: (rows deleted, WAL bytes, full-page images). WAL
    is the statements' own (EXPLAIN's WAL option: the server's WAL position moves with every
    other database on it too); the plan's top counts the chosen rows' locks and deletes, each
    data-modifying CTE (the attempts) its own."""
    (statement,) = statements
    rows = wal = images = 0
    for n in range(batches):
        ((plan,),) = sql(f"EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) {statement}", params)
        top = plan[0]["Plan"]
        parts = [top] + [
            p for p in top["Plans"] if p.get("Subplan Name", "").startswith("CTE gone_")
        ]
        rows += next(p for p in top["Plans"] if p.get("Subplan Name") == "CTE chosen")[
            "Actual Rows"
        ]
        wal += sum(p.get("WAL Bytes", 0) for p in parts)
        images += sum(p.get("WAL FPI", 0) for p in parts)
        if n == 0:
            for (line,) in sql(f"EXPLAIN (COSTS OFF) {statement}", params):
                print(f"    {line}")
            print(f"    first batch run: {plan[0]['Execution Time']:.0f} ms")
    return rows, wal, images


def measure(
    label: str,
    retention: Any,
    cutoff: Any,
    tables: tuple[str, ...],
    batch_rows: int,
    merchant_id: str,
) -> None:
    from django.conf import settings

    from core import retention as core_retention
    from core.retention import _statements, rows_purge

    print(f"\n{label}: purge")
    print(f"  before: {sizes(*tables)}")
    print(f"  insert alone (5 s): {probe_for(5, merchant_id)}")
    print(f"  one batch's plan ({batch_rows} rows):")
    sampled, wal_bytes, images = explained(
        _statements(retention, resumed=False), [cutoff, batch_rows], WAL_SAMPLE
    )
    per_row = wal_bytes / max(sampled, 1)
    print(
        f"  WAL of the first {WAL_SAMPLE} batches ({sampled:,} rows): {per_row:,.0f} bytes a row,"
        f" {images:,} full-page images"
    )

    batches: list[tuple[float, int]] = []  # each batch of the runs: (ms, rows)
    batch_purge = core_retention._batch_purge

    def timed_batch(statements: list[str], params: list[Any]) -> tuple[int, Any]:
        began = time.perf_counter()
        result = batch_purge(statements, params)
        batches.append(((time.perf_counter() - began) * 1000, result[0]))
        return result

    core_retention._batch_purge = timed_batch  # the runs' own batches, timed
    probe = Probe(merchant_id)
    probe.start()
    started = time.perf_counter()
    runs = []
    try:
        while not batches or batches[-1][1] == batch_rows:  # runs as beat runs them
            runs.append(rows_purge(retention, before=cutoff, batch_rows=batch_rows))
    finally:
        core_retention._batch_purge = batch_purge
    seconds = time.perf_counter() - started
    probe.stop.set()
    probe.join()
    purged = sum(runs)
    found = sorted(ms for ms, _ in batches)
    tenth = max(1, len(batches) // 10)
    first, last = (
        statistics.median(ms for ms, _ in part) for part in (batches[:tenth], batches[-tenth:])
    )
    print(
        f"  then purged {purged:,} rows in {seconds:.1f} s ({purged / seconds:,.0f} rows/s),"
        f" {len(runs)} runs of at most {settings.RETENTION_RUN_SECONDS:g} s: {runs[0]:,} rows"
        " in the first"
    )
    print(
        f"  {len(found):,} batches of {batch_rows}: p50 {statistics.median(found):.0f} ms,"
        f" p99 {found[int(len(found) * 0.99)]:.0f} ms, max {found[-1]:.0f} ms; median of the"
        f" first tenth {first:.0f} ms, of the last {last:.0f} ms"
    )
    print(f"  insert beside the purge: {probe.summary()}")
    print(f"  after: {sizes(*tables)} (deleted rows' space is reused, not returned)")
    for when in ("before VACUUM", "after VACUUM"):
        if when == "after VACUUM":
            for table in tables:
                sql(f"VACUUM {table}")
        began = time.perf_counter()
        left = rows_purge(retention, before=cutoff, batch_rows=batch_rows)
        idle_ms = (time.perf_counter() - began) * 1000
        print(f"  the next run, nothing left ({when}): {left} rows in {idle_ms:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--table", choices=["webhooks", "trade_events", "both"], default="both")
    parser.add_argument("--batch", type=int, default=1000, help="rows per batch (default 1000)")
    args = parser.parse_args()
    setup()
    from django.conf import settings
    from django.db import connection

    from core import clock
    from core.retention import retention_cutoff
    from merchants.webhooks.outbox import ENDED_EVENTS
    from trading.services.retention import FINISHED_TRADE_EVENTS

    name = connection.settings_dict["NAME"]
    if "bench" not in name:
        sys.exit(f"{name}: give a database of its own (its name holding 'bench'): it is emptied")
    print(f"{name}, {args.rows:,} rows, batches of {args.batch}")
    sql(
        "TRUNCATE merchants_webhookdelivery, merchants_webhookevent, trading_tradeevent,"
        " trading_tradeitem, trading_trade CASCADE"
    )
    now = clock.now()
    runs: list[tuple[str, Callable[[int], None], Any, Any, tuple[str, ...]]] = []
    if args.table in ("webhooks", "both"):
        runs.append(
            (
                "webhook events",
                fill_webhooks,
                ENDED_EVENTS,
                retention_cutoff(now=now, days=settings.RETENTION_WEBHOOK_EVENTS_DAYS),
                ("merchants_webhookevent", "merchants_webhookdelivery"),
            )
        )
    if args.table in ("trade_events", "both"):
        runs.append(
            (
                "trade events",
                fill_trade_events,
                FINISHED_TRADE_EVENTS,
                retention_cutoff(now=now, days=settings.RETENTION_TRADE_EVENTS_DAYS),
                ("trading_tradeevent",),
            )
        )
    for label, fill, retention, cutoff, tables in runs:
        print(f"\n{label}: fill")
        filled = (*tables, "trading_trade") if "trading_tradeevent" in tables else tables
        with timed("all"), indexes_built_after(filled):
            fill(args.rows)
        with timed("VACUUM ANALYZE"):
            for table in tables:
                sql(f"VACUUM ANALYZE {table}")
        merchant_id = str(sql("SELECT id FROM merchants_merchant LIMIT 1")[0][0])
        measure(label, retention, cutoff, tables, args.batch, merchant_id)


if __name__ == "__main__":
    main()
