"""Who may hold a socket: the HTTP API's rules for API keys (``api_key_refusal``: unknown or
revoked, merchant disabled, address outside the allow-list) plus the ``CORE_ACCESS`` scope,
decided when a socket connects and again every few seconds while it stays open. Synchronous
(the database): the server runs these in its database thread."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from redis.exceptions import RedisError

from core import clock
from merchants.models import ApiKey, Scope
from merchants.ratelimits import auth_epoch_read
from merchants.selectors import api_key_find, api_key_refusal, api_keys_get
from merchants.services import api_key_touch

# Longer than any key we issue; anything longer is not looked up.
MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class Grant:
    merchant_id: str
    key_id: int
    # The merchant's withdraw fee: market events are priced with it.
    fee_rate: Decimal


# A socket's standing: its key and the address it connected from.
Holder = tuple[int, str]


def socket_key(environ: Mapping[str, Any], auth: object) -> str:
    """The API key a client sent: ``auth: { apiKey }``, else the ``apiKey`` query parameter,
    else the ``api-key`` header."""
    if isinstance(auth, dict) and isinstance(auth.get("apiKey"), str):
        return str(auth["apiKey"])
    query = parse_qs(str(environ.get("QUERY_STRING", "")))
    if query.get("apiKey"):
        return query["apiKey"][0]
    return str(environ.get("HTTP_API_KEY", ""))


def socket_address(environ: Mapping[str, Any]) -> str:
    """The client's address, trusting ``NUM_PROXIES`` X-Forwarded-For hops as the API does."""
    client = (environ.get("asgi.scope") or {}).get("client")
    peer = str(client[0]) if client else str(environ.get("REMOTE_ADDR", ""))
    forwarded = environ.get("HTTP_X_FORWARDED_FOR")
    proxies = settings.NUM_PROXIES
    if not proxies or not forwarded:
        return peer
    hops = str(forwarded).split(",")
    return hops[-min(proxies, len(hops))].strip()


def _grant(key: ApiKey | None, address: str) -> Grant | None:
    if api_key_refusal(key=key, ip=address, now=clock.real_now()) is not None:
        return None
    assert key is not None
    if Scope.CORE_ACCESS not in key.scopes:
        return None
    return Grant(
        merchant_id=str(key.merchant_id),
        key_id=key.pk,
        fee_rate=key.merchant.withdraw_fee_rate,
    )


def _printable_ascii(raw_key: str) -> bool:
    """What every key we issue is. Anything else (a NUL, which PostgreSQL text cannot hold; a
    lone surrogate, which cannot be hashed) is refused before it is looked up, as the API's
    request checks refuse it in a header."""
    return raw_key.isascii() and raw_key.isprintable()


def socket_grant(*, raw_key: str, address: str) -> Grant | None:
    """What a connecting socket may see, or None (it is then closed without an event)."""
    if not raw_key or len(raw_key) > MAX_KEY_LENGTH or not _printable_ascii(raw_key):
        return None
    key = api_key_find(raw_key=raw_key)
    grant = _grant(key, address)
    if grant is not None and key is not None:
        api_key_touch(api_key=key)
    return grant


def access_epoch() -> str | None:
    """The auth epoch, which every committed change to a key, secret or merchant replaces; None
    when it cannot be read (the caller then re-checks everything)."""
    try:
        return auth_epoch_read()
    except RedisError:
        return None


def grants_recheck(*, holders: Iterable[Holder]) -> dict[Holder, Grant | None]:
    """Each open socket's standing now (one read for all their keys)."""
    holders = set(holders)
    keys = api_keys_get(ids={key_id for key_id, _ in holders})
    return {(key_id, address): _grant(keys.get(key_id), address) for key_id, address in holders}
