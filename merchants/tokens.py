"""Client tokens: HS256 JWTs signed with the merchant's API secret.

The algorithm is pinned here, never read from the token, and the header is untrusted input until
the signature checks out. Tokens are issued and checked on real time (``clock.real_now()``): the
sandbox clock, which any merchant may move, never ends one early nor extends it.
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

import jwt

from core.json import json_copy

ALGORITHM = "HS256"
# Tokens minted on a clock a little ahead of ours are still fine; far-future ones are not.
ISSUED_AT_LEEWAY_SECONDS = 60


class InvalidClientTokenError(Exception):
    pass


class _TokenJSONEncoder(json.JSONEncoder):
    def default(self, o: Any) -> Any:
        if isinstance(o, Decimal):
            # Two-decimal amounts print the same as floats, and JWT payloads must be plain JSON.
            return int(o) if o == o.to_integral_value() else float(o)
        return super().default(o)


def client_token_encode(
    *, merchant_id: str, secret: str, client: Mapping[str, Any], issued_at: datetime, ttl: int
) -> str:
    iat = int(issued_at.timestamp())
    payload = {"merchantId": merchant_id, "client": dict(client), "iat": iat, "exp": iat + ttl}
    return jwt.encode(
        payload,
        secret,
        algorithm=ALGORITHM,
        headers={"userId": merchant_id},
        json_encoder=_TokenJSONEncoder,
    )


@dataclass(frozen=True)
class _Unverified:
    """What a token says before its signature is checked."""

    algorithm: object
    header_merchant_id: object
    claims: dict[str, Any]  # never changed: callers get copies


# A client sends the same token with every call until it expires, and each call reads it three
# times (the guess of who calls, the merchant it names, the signature). PyJWT's parse is 65-125 µs
# a time, checking the token character by character; its results depend on nothing but the
# token (and the secret, for the signature), so each process keeps the latest few thousand.
_KEPT_TOKENS = 4096


@lru_cache(maxsize=_KEPT_TOKENS)
def _unverified(token: str) -> _Unverified:
    try:
        parsed = jwt.decode_complete(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise InvalidClientTokenError("malformed token") from exc
    header = parsed["header"]
    return _Unverified(header.get("alg"), header.get("userId"), parsed["payload"])


@lru_cache(maxsize=_KEPT_TOKENS)
def _signed_with(token: str, secret: str) -> bool:
    """The token's signature is this secret's, and it has the claims we require."""
    try:
        jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            options={"require": ["exp", "iat"], "verify_exp": False, "verify_iat": False},
        )
    except jwt.InvalidSignatureError:
        return False
    except jwt.PyJWTError as exc:
        raise InvalidClientTokenError(str(exc)) from exc
    return True


def client_token_claimed_merchant(token: str) -> str | None:
    """The merchant a token's header names (``userId``), unchecked: only a guess of who calls
    (``merchants.gate``)."""
    try:
        merchant_id = _unverified(token).header_merchant_id if token else None
    except InvalidClientTokenError:
        return None
    return merchant_id if isinstance(merchant_id, str) else None


def client_token_merchant_id(token: str) -> str:
    """The merchant a token claims, from the ``merchantId`` claim or the ``userId`` header."""
    unverified = _unverified(token)
    if unverified.algorithm != ALGORITHM:
        raise InvalidClientTokenError("algorithm not allowed")
    header_id, claim_id = unverified.header_merchant_id, unverified.claims.get("merchantId")
    if header_id is not None and claim_id is not None and header_id != claim_id:
        raise InvalidClientTokenError("userId and merchantId disagree")
    merchant_id = claim_id if claim_id is not None else header_id
    if not isinstance(merchant_id, str) or not merchant_id:
        raise InvalidClientTokenError("no merchant named")
    return merchant_id


def client_token_check(token: str, *, secrets: Iterable[str], now: datetime) -> None:
    """The token is signed by one of ``secrets`` and valid at ``now``, else
    InvalidClientTokenError; its claims are not copied (``client_token_decode`` gives them)."""
    for secret in secrets:
        if _signed_with(token, secret):
            _check_times(_unverified(token).claims, now)
            return
    raise InvalidClientTokenError("signature does not verify")


def client_token_decode(token: str, *, secrets: Iterable[str], now: datetime) -> dict[str, Any]:
    """Claims of a token signed by one of ``secrets`` and valid at ``now`` (a new dict each
    call: the caller may keep or change it)."""
    client_token_check(token, secrets=secrets, now=now)
    claims: dict[str, Any] = json_copy(_unverified(token).claims)
    return claims


def _check_times(claims: Mapping[str, Any], now: datetime) -> None:
    exp, iat = claims["exp"], claims["iat"]
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (exp, iat)):
        raise InvalidClientTokenError("exp and iat must be integers")
    moment = now.timestamp()
    if exp <= moment:
        raise InvalidClientTokenError("expired")
    if iat > moment + ISSUED_AT_LEEWAY_SECONDS:
        raise InvalidClientTokenError("issued in the future")
