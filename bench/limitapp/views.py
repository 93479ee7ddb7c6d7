"""The three limits, each a DRF view answering the project's envelope:

- ``GET /limit/no-io``: the ``api-key`` header checked against the keys in memory, the envelope;
- ``GET /limit/read``: the same, one Redis round trip (the rate limiter's INCR script) and one
  PostgreSQL query (a row by primary key): the read limit;
- ``POST /limit/write``: the same Redis round trip and one transaction: an insert and a guarded
  update (``balance >= amount``), committed durably: the write limit.

Keys are ``limit-key-<n>`` for the accounts 0..ACCOUNTS-1 (``bench/limits.py`` makes them)."""

import redis
from django.conf import settings
from django.db import connection, transaction
from rest_framework.exceptions import AuthenticationFailed, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from limitapp import ACCOUNTS

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
