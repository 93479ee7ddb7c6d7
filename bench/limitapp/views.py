"""The limits, each a DRF view answering the project's envelope:

- ``GET /limit/no-io``: the ``api-key`` header checked against the keys in memory, the envelope;
- ``GET /limit/read``: the same, one Redis round trip (the rate limiter's INCR script) and one
  PostgreSQL query (a row by primary key): the read limit;
- ``POST /limit/write``: the same Redis round trip and one transaction: an insert and a guarded
  update (``balance >= amount``), committed durably: the write limit;
- ``GET /limit/page``: the read limit's Redis round trip and one query reading a page of 20 rows
  of 35 columns (the account's newest, by an index), rendered: the page limit (trade pages);
- ``POST /limit/buy``: the Redis round trip and one transaction with a buy's least writes: five
  inserts (trade, item, transfer, its two postings in one statement, outbox event: the trade's
  ``trade.initiated``, rendered as the service's webhooks render it) and two balance moves
  (available down, guarded: only if it covers the amount; locked up), committed durably: the
  buy limit;
- ``POST /limit/buy-pipeline``: the buy limit's request, then its event handed to the pipeline
  limit's worker (limitapp.pipeline): the approval callback, the purchase, the ``trade.pending``
  webhook.

Keys are ``limit-key-<n>`` for the accounts 0..ACCOUNTS-1 (``bench/limits.py`` makes them)."""

import uuid
from datetime import UTC, datetime
from decimal import Decimal

import orjson
import redis
from django.conf import settings
from django.db import connection, transaction
from rest_framework.exceptions import AuthenticationFailed, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from limitapp import ACCOUNTS, PAGE_COLUMNS, PAGE_SIZE
from limitapp.pipeline import buy_pipeline, trade_event

KEYS = {f"limit-key-{n}": n for n in range(ACCOUNTS)}
_INCREMENT = """
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return hits
"""
_redis = redis.Redis.from_url(settings.REDIS_URL, **settings.REDIS_CLIENT_OPTIONS)
_increment = _redis.register_script(_INCREMENT)


def _account(request: Request) -> int:
    account = KEYS.get(request.headers.get("api-key", ""))
    if account is None:
        raise AuthenticationFailed("unknown key")
    return account


def _count(account: int) -> int:
    return int(_increment(keys=[f"limit:rl:{account}"], args=[3600]))


class NoIoApi(APIView):
    def get(self, request: Request) -> Response:
        return Response({"account": _account(request)})


class ReadApi(APIView):
    def get(self, request: Request) -> Response:
        account = _account(request)
        hits = _count(account)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, name, balance FROM bench_limit_account WHERE id = %s", [account]
            )
            row = cursor.fetchone()
        return Response({"id": row[0], "name": row[1], "balance": row[2], "hits": hits})


class WriteApi(APIView):
    def post(self, request: Request) -> Response:
        account = _account(request)
        amount = request.data.get("amount") if isinstance(request.data, dict) else None
        if not isinstance(amount, int) or amount <= 0:
            raise ValidationError({"amount": "A positive whole number."})
        hits = _count(account)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO bench_limit_entry (account_id, amount) VALUES (%s, %s)",
                [account, amount],
            )
            cursor.execute(
                "UPDATE bench_limit_account SET balance = balance - %s"
                " WHERE id = %s AND balance >= %s RETURNING balance",
                [amount, account, amount],
            )
            row = cursor.fetchone()
        if row is None:
            raise ValidationError({"amount": "More than the balance."})
        return Response({"id": account, "balance": row[0], "hits": hits})


_PAGE_NAMES = [name for name, _ in PAGE_COLUMNS]
_PAGE = (
    f"SELECT {', '.join(_PAGE_NAMES)} FROM bench_limit_row WHERE account_id = %s"
    f" ORDER BY at_0 DESC, id DESC LIMIT {PAGE_SIZE}"
)


class PageApi(APIView):
    def get(self, request: Request) -> Response:
        account = _account(request)
        hits = _count(account)
        with connection.cursor() as cursor:
            cursor.execute(_PAGE, [account])
            rows = cursor.fetchall()
        items = [dict(zip(_PAGE_NAMES, row, strict=True)) for row in rows]
        return Response({"items": items, "hits": hits})


def _trade(
    *, trade_id: uuid.UUID, account: int, amount: int, listing: str, trade_url: str
) -> dict[str, object]:
    """The new trade as the service's webhooks show one (trading.trades.shapes.trade_json)."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    price = format(Decimal(amount), ".2f")
    return {
        "id": str(trade_id),
        "type": "withdraw",
        "source": "self",
        "status": "initiated",
        "game": "730",
        "merchantId": f"limit-account-{account}",
        "clientPlatformID": "76561197960265829",
        "clientTradeUrl": trade_url,
        "items": [
            {
                "id": listing,
                "name": "AK-47 | Redline (Field-Tested)",
                "marketHashName": "AK-47 | Redline (Field-Tested)",
                "type": "Rifle",
                "iconUrl": "https://community.steamstatic.com/economy/image/limit-item",
                "appid": 730,
                "tradable": True,
                "amount": 1,
                "status": "initiated",
                "offer": {"price": price, "delivery": "standard"},
            }
        ],
        "totalPrice": price,
        "createdAt": now,
        "updatedAt": now,
    }


def _buy(request: Request) -> tuple[int, str, int]:
    """The buy limit's request: the Redis round trip and one transaction with a buy's least
    writes, its ``trade.initiated`` event (the approval callback) among them. Returns the
    account, the event's id and the rate limit's count."""
    account = _account(request)
    amount = request.data.get("amount") if isinstance(request.data, dict) else None
    if not isinstance(amount, int) or amount <= 0:
        raise ValidationError({"amount": "A positive whole number."})
    hits = _count(account)
    trade_id, event_id = uuid.uuid4(), str(uuid.uuid4())
    listing, trade_url = request.data.get("itemId", ""), request.data.get("tradeUrl", "")
    event = trade_event(
        event_id=event_id,
        kind="trade.initiated",
        sequence=0,
        trade=_trade(
            trade_id=trade_id, account=account, amount=amount, listing=listing, trade_url=trade_url
        ),
    )
    locked = account + ACCOUNTS
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_limit_trade (id, account_id, status, total, trade_url)"
            " VALUES (%s, %s, 'initiated', %s, %s)",
            [trade_id, account, amount, trade_url],
        )
        cursor.execute(
            "INSERT INTO bench_limit_item (trade_id, listing, price) VALUES (%s, %s, %s)",
            [trade_id, listing, amount],
        )
        cursor.execute(
            "INSERT INTO bench_limit_transfer (kind, cause_id) VALUES ('LOCK', %s) RETURNING id",
            [trade_id],
        )
        (transfer_id,) = cursor.fetchone()
        # In account order, as the wallet's transfers, so concurrent buys cannot deadlock.
        cursor.execute(
            "UPDATE bench_limit_account SET balance = balance - %s WHERE id = %s AND balance >= %s",
            [amount, account, amount],
        )
        if cursor.rowcount != 1:
            raise ValidationError({"amount": "More than the balance."})
        cursor.execute(
            "UPDATE bench_limit_account SET balance = balance + %s WHERE id = %s",
            [amount, locked],
        )
        cursor.execute(
            "INSERT INTO bench_limit_posting (transfer_id, account_id, amount)"
            " VALUES (%s, %s, %s), (%s, %s, %s)",
            [transfer_id, account, -amount, transfer_id, locked, amount],
        )
        cursor.execute(
            "INSERT INTO bench_limit_event (id, account_id, trade_id, kind, payload)"
            " VALUES (%s, %s, %s, 'trade.initiated', %s::jsonb)",
            [event_id, account, trade_id, orjson.dumps(event).decode()],
        )
    return account, event_id, hits


class BuyApi(APIView):
    def post(self, request: Request) -> Response:
        _, event_id, hits = _buy(request)
        return Response({"eventId": event_id, "hits": hits})


class BuyPipelineApi(APIView):
    def post(self, request: Request) -> Response:
        _, event_id, hits = _buy(request)
        # After the commit, as the service hands its approval callback to a worker; a broker
        # that is down fails the request here (the service leaves the event to its sweep).
        buy_pipeline.apply_async((event_id,))
        return Response({"eventId": event_id, "hits": hits})
