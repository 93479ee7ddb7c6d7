"""Trading data for the benchmarks: funded buyers, listings to buy, 1,000,000 trades of
history loaded by COPY, and waiting for the worker to finish the work a load left behind.
Imported by bench/trading.py and bench/suite.py (after ``harness.setup_django()``)."""

import json
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

from harness import Request

TRADE_MERCHANTS = 10
TRADES_PER_MERCHANT = 100_000
RECEIVER_PORT = 8097
TRADE_URL = "https://steamcommunity.com/tradeoffer/new/?partner={}&token=Ab3_x-Z9"


def buyers(count: int, *, prefix: str = "bench buyer") -> list[tuple[str, Decimal]]:
    """Funded merchants whose callback URL is the bench receiver: (api key, fee)."""
    from merchants.models import Scope
    from merchants.services import api_key_create, merchant_create
    from wallet.services import wallet_admin_credit

    made = []
    for n in range(count):
        merchant = merchant_create(
            name=f"{prefix} {n}",
            is_verified=True,
            callback_url=f"http://127.0.0.1:{RECEIVER_PORT}/hooks",
        )
        _, key = api_key_create(merchant=merchant, scopes=[Scope.CORE_ACCESS])
        wallet_admin_credit(merchant=merchant, amount=Decimal(10_000_000), reason="bench")
        made.append((key, merchant.withdraw_fee_rate))
    return made


def untaken_listings(count: int) -> list[tuple[str, Decimal]]:
    """(id, sourcing price) of first-game listings no trade has taken yet (earlier runs' buys
    may still be waiting for the worker), so every run buys listings that are for sale."""
    from sandbox.models import SandboxListing
    from trading.models import TradeItem

    taken = TradeItem.objects.exclude(listing_id="").values("listing_id")
    return list(
        SandboxListing.objects.filter(game=730)
        .exclude(id__in=taken)
        .order_by("id")
        .values_list("id", "price")[:count]
    )


def buy_requests(
    people: list[tuple[str, Decimal]], listings: list[tuple[str, Decimal]]
) -> list[Request]:
    """Each listing bought once, in turn by each merchant, at the price the merchant sees."""
    from trading.pricing import fee_inclusive

    requests = []
    for n, (listing_id, price) in enumerate(listings):
        key, fee = people[n % len(people)]
        body = json.dumps(
            {
                "tradeUrl": TRADE_URL.format(100 + n % 50),
                "items": [{"itemId": listing_id, "price": float(fee_inclusive(price, fee))}],
            }
        )
        requests.append(Request("POST", "/secure/buy", {"api-key": key}, body))
    return requests


def trade_history() -> list[tuple[str, list[str]]]:
    """Ten merchants with 100,000 self trades each (1,000,000 in all), loaded with COPY:
    (api key, [cursor at 10,000 deep, cursor at 90,000 deep])."""
    from merchants.models import Scope
    from merchants.services import api_key_create
    from trading.history.selectors import _encode_cursor
    from trading.models import Trade

    made = []
    for merchant in loaded_merchants(
        "bench history", TRADE_MERCHANTS, _copy_trades, "trading_trade", "trading_tradeitem"
    ):
        _, key = api_key_create(merchant=merchant, scopes=[Scope.CORE_ACCESS])
        rows = Trade.objects.filter(merchant=merchant, source="self", game=730).order_by(
            "-created_at", "-id"
        )
        made.append((key, [_encode_cursor(rows[depth]) for depth in (10_000, 90_000)]))
    return made


def _copy_trades(merchants: list) -> None:  # type: ignore[type-arg]
    from django.db import connection
    from django.utils import timezone

    from trading.models import Trade, TradeItem

    started = time.perf_counter()
    now = timezone.now()
    trade_fields = list(Trade._meta.concrete_fields)
    item_fields = [f for f in TradeItem._meta.concrete_fields if f.name != "id"]
    with connection.cursor() as cursor:
        raw = cursor.cursor
        trade_columns = ", ".join(f.column for f in trade_fields)
        item_columns = ", ".join(f.column for f in item_fields)
        with raw.copy(f"COPY trading_trade ({trade_columns}) FROM STDIN") as copy:
            ids = []
            for m_index, merchant in enumerate(merchants):
                for n in range(TRADES_PER_MERCHANT):
                    trade_id = uuid.uuid4()
                    ids.append(trade_id)
                    moment = now - timedelta(seconds=(TRADES_PER_MERCHANT - n) * 7 + m_index)
                    values = {
                        "id": trade_id,
                        "merchant": merchant.pk,
                        "client": None,
                        "type": "withdraw",
                        "source": "self",
                        "status": "completed",
                        "game": 730,
                        "external_id": f"hist-{m_index}-{n}",
                        "client_platform_id": "76561197960265829",
                        "client_trade_url": TRADE_URL.format(101),
                        "total_price": Decimal("10.50"),
                        "created_at": moment,
                        "updated_at": moment,
                        "bot_info": None,
                    }
                    copy.write_row([copy_value(f, values) for f in trade_fields])
        with raw.copy(f"COPY trading_tradeitem ({item_columns}) FROM STDIN") as copy:
            for trade_id in ids:
                values = {
                    "trade": trade_id,
                    "position": 0,
                    "public_id": str(uuid.uuid4()),
                    "status": "completed",
                    "appid": 730,
                    "price": Decimal("10.50"),
                    "sourcing_price": Decimal("10.00"),
                    "delivery": "standard",
                    "details": json.dumps({"name": "AK-47 | Redline"}),
                    "updated_at": now,
                }
                copy.write_row([copy_value(f, values) for f in item_fields])
    print(f"loaded {len(ids)} trades in {time.perf_counter() - started:.1f} s")


def loaded_merchants(
    prefix: str,
    count: int,
    load: Callable[[list], None],
    *tables: str,  # type: ignore[type-arg]
) -> list:  # type: ignore[type-arg]
    """``count`` merchants named ``<prefix> <n>`` that exist only with the rows ``load`` copies
    in for them: made and loaded once, then found by name on later runs."""
    from django.db import transaction

    from merchants.models import Merchant
    from merchants.services import merchant_create

    merchants = list(Merchant.objects.filter(name__startswith=f"{prefix} ").order_by("name"))
    if len(merchants) < count:
        with transaction.atomic():  # the merchants exist only with their rows
            merchants = [
                merchant_create(name=f"{prefix} {n}", is_verified=True) for n in range(count)
            ]
            load(merchants)
        vacuum_analyze(*tables)
    return merchants


def vacuum_analyze(*tables: str) -> None:
    """Fresh rows: set the visibility map (index-only scans) and the planner's statistics.
    Without tables: the whole database."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table_name in tables or ("",):
            cursor.execute(f"VACUUM ANALYZE {table_name}")


def copy_value(field, values):  # type: ignore[no-untyped-def]
    name = field.name
    if name in values:
        value = values[name]
        return (
            json.dumps(value)
            if field.get_internal_type() == "JSONField"
            and value is not None
            and not isinstance(value, str)
            else value
        )
    default = field.get_default()
    if field.get_internal_type() == "JSONField":
        return json.dumps(default) if default is not None else None
    return default


def drain(
    deadline_seconds: float = 300, also_busy: Callable[[], bool] | None = None
) -> float | None:
    """Wait (polling, bounded) for the worker to finish the approvals and purchases (and what
    ``also_busy`` says is left); the seconds it took, None when the deadline passed first."""
    from merchants.webhooks.models import WebhookEvent
    from trading.models import TradeItem

    started = time.monotonic()
    while time.monotonic() - started < deadline_seconds:
        busy = (
            WebhookEvent.objects.filter(status="pending").exists()
            or TradeItem.objects.filter(status="pending", purchase_ref="").exists()
            or (also_busy is not None and also_busy())
        )
        if not busy:
            return time.monotonic() - started
        time.sleep(1)
    return None
