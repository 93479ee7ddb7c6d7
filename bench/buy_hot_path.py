"""What the next step on ``POST /secure/buy`` would save (issue 43): the CPU of each piece of the
request's hot path as the service does it today, beside the same work done the way the plan in
bench/README.md ("The buy end to end against its pipeline limit") proposes, in one process,
in alternating passes, so both meet the same machine.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/trading_perf_h \\
        BENCH_REDIS_URL=redis://127.0.0.1:6379/12 .venv/bin/python bench/buy_hot_path.py

Reads: the trade-URL check (a URL already checked, a new one) against its syntax alone; the
listing's price and the catalog's names (two ORM queries) against one hand-written statement.
Writes, each in a transaction rolled back (the wallet's lock, hand-written already, left out of
both): the trade, its item and its event as ``withdrawal_store`` writes them (the ORM) against
the same rows in hand-written INSERTs, and in one statement. Uses the bench database (bench/run
makes it) and the bench receiver as the merchant's callback URL.
"""

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ensure_database, processes_cpu, receiver, setup_django
from tradedata import RECEIVER_PORT, TRADE_URL, buyers, untaken_listings


def cpu_ms(work: Callable[[], Any], rounds: int, backend: int) -> tuple[float, float]:
    """Mean CPU per call of ``work`` in ms: this process's, and its PostgreSQL backend's."""
    started, backend_started = time.process_time(), processes_cpu([backend])
    for _ in range(rounds):
        work()
    return (
        1000 * (time.process_time() - started) / rounds,
        1000 * (processes_cpu([backend]) - backend_started) / rounds,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400, help="calls per piece and pass")
    parser.add_argument("--passes", type=int, default=3, help="alternating passes (the median)")
    args = parser.parse_args()
    ensure_database()
    setup_django()
    from django.db import connection

    with receiver(RECEIVER_PORT):
        key, _ = buyers(1, prefix=f"hot path buyer {time.strftime('%Y%m%dT%H%M%S')}")[0]
        pieces = Pieces(key, untaken_listings(args.rounds * args.passes * 4 + 8))
        with connection.cursor() as cursor:  # this script's one connection, for its backend
            cursor.execute("SELECT pg_backend_pid()")
            (backend,) = cursor.fetchone()
        found: dict[str, list[tuple[float, float]]] = {}
        for _ in range(args.passes):
            for label, work in pieces.all():
                found.setdefault(label, []).append(cpu_ms(work, args.rounds, backend))
    print("| piece | Python CPU ms | PostgreSQL CPU ms | Python, each pass |")
    print("|---|---:|---:|---|")
    for label, figures in found.items():
        python = statistics.median(f[0] for f in figures)
        postgres = statistics.median(f[1] for f in figures)
        passes = " / ".join(f"{f[0]:.2f}" for f in figures)
        print(f"| {label} | {python:.2f} | {postgres:.2f} | {passes} |")


class Pieces:
    """The pieces, each a function doing one buy's worth of it."""

    def __init__(self, key: str, listings: list[tuple[str, Decimal]]) -> None:
        from core.db import ModelRows
        from merchants.models import ApiKey, Merchant
        from merchants.webhooks.models import WebhookEvent
        from trading.models import Trade, TradeItem

        merchant_id = ApiKey.objects.get(prefix=key[: ApiKey.PREFIX_LENGTH]).merchant_id
        self.merchant = Merchant.objects.get(pk=merchant_id)
        self.listings = listings
        self.turn = 0
        self.url = TRADE_URL.format(101)
        self.fresh_url = iter(TRADE_URL.format(200_000 + n) for n in range(10**7))
        self.trades = ModelRows(Trade)
        self.items = ModelRows(TradeItem)
        self.events = ModelRows(WebhookEvent)
        self.constants: dict[str, dict[str, Any]] = {}

    def all(self) -> list[tuple[str, Callable[[], Any]]]:
        return [
            ("today: the trade-URL check, the URL checked before", self.url_checked),
            ("today: the trade-URL check, a URL new to the merchant", self.url_new),
            ("plan: the trade URL's syntax alone", self.url_syntax),
            ("today: the price lookup and the catalog's names (2 ORM queries)", self.priced_orm),
            ("plan: both in one hand-written statement", self.priced_by_hand),
            ("today: trade, item and event INSERTs through the ORM (+ BEGIN, ROLLBACK)", self.orm),
            ("plan: the same three INSERTs hand-written (+ BEGIN, ROLLBACK)", self.by_hand),
            ("plan: the same three rows in one statement (+ BEGIN, ROLLBACK)", self.one_statement),
            (
                "plan: one statement, only the buy's own values converted per buy (+ BEGIN, "
                "ROLLBACK)",
                self.lean,
            ),
            ("an empty transaction (BEGIN, ROLLBACK)", self.empty),
        ]

    def url_checked(self) -> None:
        from trading.withdrawals.services.create import recipient_check

        recipient_check(merchant=self.merchant, trade_url=self.url)

    def url_new(self) -> None:
        from trading.withdrawals.services.create import recipient_check

        recipient_check(merchant=self.merchant, trade_url=next(self.fresh_url))

    def url_syntax(self) -> None:
        from merchants.tradeurls import trade_url_platform_id

        assert trade_url_platform_id(self.url) is not None

    def _listing(self) -> tuple[str, Decimal]:
        self.turn += 1
        return self.listings[self.turn % len(self.listings)]

    def priced_orm(self) -> None:
        from trading.models import CatalogItem
        from trading.pricing import fee_inclusive
        from trading.withdrawals.services.create import WithdrawItem, _priced_listings

        listing_id, price = self._listing()
        current = fee_inclusive(price, self.merchant.withdraw_fee_rate)
        priced = _priced_listings(self.merchant, 730, [WithdrawItem(listing_id, current)], None)
        CatalogItem.objects.in_bulk({listing.catalog_id for _, listing, _ in priced})

    _PRICED = (
        "SELECT l.id, l.item_id, l.game, l.price, l.amount, l.delivery, l.phase,"
        " c.name, c.market_hash_name, c.item_type, c.icon_url"
        " FROM sandbox_sandboxlisting l LEFT JOIN trading_catalogitem c ON c.id = l.item_id"
        " WHERE l.id = ANY(%s)"
    )

    def priced_by_hand(self) -> None:
        from django.db import connection

        from trading.pricing import fee_inclusive

        listing_id, price = self._listing()
        with connection.cursor() as cursor:
            cursor.execute(self._PRICED, [[listing_id]])
            rows = cursor.fetchall()
        assert fee_inclusive(rows[0][3], self.merchant.withdraw_fee_rate) == fee_inclusive(
            price, self.merchant.withdraw_fee_rate
        )

    def _rows(self) -> tuple[Any, list[Any]]:
        """A new trade of one item, as withdrawal_create drafts it."""
        from core import clock
        from trading.models import Trade, TradeItem
        from trading.trades.services import trade_draft

        listing_id, price = self._listing()
        item = TradeItem(
            public_id=listing_id,
            listing_id=listing_id,
            appid=730,
            amount=1,
            price=price,
            sourcing_price=price,
            delivery="standard",
            details={"name": "AK-47 | Redline", "marketHashName": "AK-47 | Redline (FT)"},
        )
        trade = trade_draft(
            merchant=self.merchant,
            type=Trade.Type.WITHDRAW,
            source=Trade.Source.SELF,
            game=730,
            external_id="",
            client=None,
            platform_id="76561197960265829",
            trade_url=self.url,
            external_client_user_id="",
            rows=[item],
            total=price,
            now=clock.now(),
        )
        item.locked = price
        return trade, [item]

    def _rolled_back(self, write: Callable[[], None]) -> None:
        from django.db import transaction

        with transaction.atomic():
            write()
            transaction.set_rollback(True)

    def empty(self) -> None:
        from django.db import connection

        def nothing() -> None:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")

        self._rolled_back(nothing)

    def orm(self) -> None:
        from trading.trades.channels import trade_events_publish
        from trading.trades.services import trade_insert

        def write() -> None:
            trade, items = self._rows()
            trade_events_publish(trade_insert(trade=trade, items=items, asks_approval=True))

        self._rolled_back(write)

    def _event(self, trade: Any, items: list[Any], *, as_instance: bool = False) -> Any:
        """What ``trade_insert`` and the channels do besides the three ORM writes (the trade
        rendered, the feed's message and the hand-off registered for the commit), and the
        event's row as ``webhook_event_emit`` writes it, as parameters."""
        from core import clock
        from core.context import context_trade_set
        from core.feed import feed_publish_on_commit
        from core.handoffs import handoff_on_commit
        from core.metrics import TRADE_MOVES, count_on_commit
        from merchants.webhooks.models import WebhookEvent
        from merchants.webhooks.outbox import WEBHOOK_DELIVERY, webhook_payload
        from trading.trades.shapes import trade_json

        context_trade_set(trade.pk, trade.merchant_id)
        count_on_commit(TRADE_MOVES, 1, trade.type, trade.status)
        body = trade_json(trade, items)
        feed_publish_on_commit(
            {
                "kind": "merchant",
                "merchantId": str(trade.merchant_id),
                "event": "trade",
                "order": f"trade:{trade.id}",
                "sequence": 0,
            },
            {"trade": body},
        )
        now = clock.now()
        event_id = uuid.uuid4()
        payload = webhook_payload(
            event_id=event_id,
            type="trade.initiated",
            created_at=now,
            sequence=0,
            body_key="trade",
            body=body,
        )
        handoff_on_commit(WEBHOOK_DELIVERY, str(event_id))
        # An instance only for its fields' values (defaults included): no ORM statement.
        event = WebhookEvent(
            id=event_id,
            merchant_id=trade.merchant_id,
            type="trade.initiated",
            subject_type="trade",
            subject_id=str(trade.id),
            sequence=0,
            payload=payload,
            is_approval=True,
            created_at=now,
            next_attempt_at=now,
        )
        if as_instance:
            return event
        return [self.events.param(f.name, getattr(event, f.attname)) for f in self.events.fields]

    def _params(self, trade: Any, items: list[Any]) -> tuple[list[Any], list[Any]]:
        trade.next_sequence = 1
        trade_values = [
            self.trades.param(f.name, getattr(trade, f.attname)) for f in self.trades.fields
        ]
        item = items[0]
        item.trade_id = trade.id
        item_fields = [f for f in self.items.fields if not f.primary_key]
        return trade_values, [
            self.items.param(f.name, getattr(item, f.attname)) for f in item_fields
        ]

    def by_hand(self) -> None:
        from django.db import connection

        item_fields = [f.name for f in self.items.fields if not f.primary_key]

        def write() -> None:
            trade, items = self._rows()
            trade_values, item_values = self._params(trade, items)
            event_values = self._event(trade, items)
            with connection.cursor() as cursor:
                cursor.execute(
                    self.trades.insert([f.name for f in self.trades.fields]), trade_values
                )
                cursor.execute(self.items.insert(item_fields), item_values)
                cursor.execute(
                    self.events.insert([f.name for f in self.events.fields]), event_values
                )

        self._rolled_back(write)

    def one_statement(self) -> None:
        from django.db import connection

        item_fields = [f.name for f in self.items.fields if not f.primary_key]
        statement = (
            f"WITH t AS ({self.trades.insert([f.name for f in self.trades.fields])} RETURNING id),"
            f" i AS ({self.items.insert(item_fields)})"
            f" {self.events.insert([f.name for f in self.events.fields])}"
        )

        def write() -> None:
            trade, items = self._rows()
            trade_values, item_values = self._params(trade, items)
            with connection.cursor() as cursor:
                cursor.execute(statement, trade_values + item_values + self._event(trade, items))

        self._rolled_back(write)

    # What a buy sets of each new row (withdrawal_create, trade_draft, webhook_event_emit):
    # converted per buy. Every other column holds the same value in every new buy's row.
    _OWN = {
        "trade": {
            "id",
            "merchant",
            "client",
            "game",
            "external_id",
            "client_platform_id",
            "client_trade_url",
            "external_client_user_id",
            "total_price",
            "created_at",
            "updated_at",
            "auto_cancel_at",
        },
        "item": {
            "trade",
            "position",
            "public_id",
            "external_id",
            "listing_id",
            "catalog_id",
            "appid",
            "amount",
            "price",
            "sourcing_price",
            "delivery",
            "phase",
            "details",
            "locked",
            "updated_at",
        },
        "event": {"id", "merchant", "subject_id", "payload", "created_at", "next_attempt_at"},
    }

    def _lean(self, kind: str, rows: Any, instance: Any, fields: list[Any]) -> list[Any]:
        """The row's parameters: the buy's own values converted now, the others once."""
        own = self._OWN[kind]
        if kind not in self.constants:
            self.constants[kind] = {
                f.name: rows.param(f.name, getattr(instance, f.attname))
                for f in fields
                if f.name not in own
            }
        constant = self.constants[kind]
        return [
            rows.param(f.name, getattr(instance, f.attname)) if f.name in own else constant[f.name]
            for f in fields
        ]

    def lean(self) -> None:
        from django.db import connection

        item_fields = [f for f in self.items.fields if not f.primary_key]
        statement = (
            f"WITH t AS ({self.trades.insert([f.name for f in self.trades.fields])} RETURNING id),"
            f" i AS ({self.items.insert([f.name for f in item_fields])})"
            f" {self.events.insert([f.name for f in self.events.fields])}"
        )

        def write() -> None:
            trade, items = self._rows()
            trade.next_sequence = 1
            item = items[0]
            item.trade_id = trade.id
            event = self._event(trade, items, as_instance=True)
            with connection.cursor() as cursor:
                cursor.execute(
                    statement,
                    self._lean("trade", self.trades, trade, self.trades.fields)
                    + self._lean("item", self.items, item, item_fields)
                    + self._lean("event", self.events, event, self.events.fields),
                )

        self._rolled_back(write)


if __name__ == "__main__":
    main()
