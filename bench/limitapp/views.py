"""The limits, each a DRF view answering the project's envelope:

- ``GET /limit/no-io``: the ``api-key`` header checked against the keys in memory, the envelope;
- ``GET /limit/read``: the same, one Redis round trip (the rate limiter's INCR script) and one
  PostgreSQL query (a row by primary key): the read limit;
- ``POST /limit/write``: the same Redis round trip and one transaction: an insert and a guarded
  update (``balance >= amount``), committed durably: the write limit;
- ``GET /limit/page``: the read limit's Redis round trip and one query reading a page of 20 rows
  of 35 columns (the account's newest, by an index), rendered: the page limit (trade pages);
- ``POST /limit/buy``: the Redis round trip and one transaction with a buy's least writes: five
  inserts (trade, item, transfer, its two postings in one statement, outbox event) and two
  balance moves (available down, guarded: only if it covers the amount; locked up), committed
  durably: the buy limit.

Keys are ``limit-key-<n>`` for the accounts 0..ACCOUNTS-1 (``bench/limits.py`` makes them)."""

import uuid

import redis
from django.conf import settings
from django.db import connection, transaction
from rest_framework.exceptions import AuthenticationFailed, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from limitapp import ACCOUNTS, PAGE_COLUMNS, PAGE_SIZE

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


class BuyApi(APIView):
    def post(self, request: Request) -> Response:
        account = _account(request)
        amount = request.data.get("amount") if isinstance(request.data, dict) else None
        if not isinstance(amount, int) or amount <= 0:
            raise ValidationError({"amount": "A positive whole number."})
        hits = _count(account)
        trade_id = uuid.uuid4()
        locked = account + ACCOUNTS
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO bench_limit_trade (id, account_id, status, total, trade_url)"
                " VALUES (%s, %s, 'initiated', %s, %s)",
                [trade_id, account, amount, request.data.get("tradeUrl", "")],
            )
            cursor.execute(
                "INSERT INTO bench_limit_item (trade_id, listing, price) VALUES (%s, %s, %s)",
                [trade_id, request.data.get("itemId", ""), amount],
            )
            cursor.execute(
                "INSERT INTO bench_limit_transfer (kind, cause_id) VALUES ('LOCK', %s)"
                " RETURNING id",
                [trade_id],
            )
            (transfer_id,) = cursor.fetchone()
            # In account order, as the wallet's transfers, so concurrent buys cannot deadlock.
            cursor.execute(
                "UPDATE bench_limit_account SET balance = balance - %s"
                " WHERE id = %s AND balance >= %s",
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
                "INSERT INTO bench_limit_event (id, account_id, kind, payload)"
                " VALUES (%s, %s, 'trade.initiated', %s)",
                [uuid.uuid4(), account, f'{{"tradeId": "{trade_id}"}}'],
            )
        return Response({"tradeId": str(trade_id), "hits": hits})
