"""Client tokens: HS256 JWTs signed with the merchant's API secret.

The algorithm is pinned here, never read from the token, and the header is untrusted input until
the signature checks out. Expiry is checked against the service clock, so the sandbox clock moves
it like everything else.
"""

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

import jwt

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


def client_token_claimed_merchant(token: str) -> str | None:
    """The merchant a token's header names (``userId``), unchecked and without decoding its
    payload: only a guess of who calls (``merchants.gate``)."""
    try:
        merchant_id = jwt.get_unverified_header(token).get("userId") if token else None
    except jwt.PyJWTError:
        return None
    return merchant_id if isinstance(merchant_id, str) else None


def client_token_merchant_id(token: str) -> str:
    """The merchant a token claims, from the ``merchantId`` claim or the ``userId`` header."""
    try:
        # Header and claims from one parse (PyJWT checks the token character by character).
        unverified = jwt.decode_complete(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise InvalidClientTokenError("malformed token") from exc
    header, claims = unverified["header"], unverified["payload"]
    if header.get("alg") != ALGORITHM:
        raise InvalidClientTokenError("algorithm not allowed")
    header_id, claim_id = header.get("userId"), claims.get("merchantId")
    if header_id is not None and claim_id is not None and header_id != claim_id:
        raise InvalidClientTokenError("userId and merchantId disagree")
    merchant_id = claim_id if claim_id is not None else header_id
    if not isinstance(merchant_id, str) or not merchant_id:
        raise InvalidClientTokenError("no merchant named")
    return merchant_id


def client_token_decode(token: str, *, secrets: Iterable[str], now: datetime) -> dict[str, Any]:
    """Claims of a token signed by one of ``secrets`` and valid at ``now``."""
    for secret in secrets:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                secret,
                algorithms=[ALGORITHM],
                options={"require": ["exp", "iat"], "verify_exp": False, "verify_iat": False},
            )
        except jwt.InvalidSignatureError:
            continue
        except jwt.PyJWTError as exc:
            raise InvalidClientTokenError(str(exc)) from exc
        _check_times(claims, now)
        return claims
    raise InvalidClientTokenError("signature does not verify")


def _check_times(claims: Mapping[str, Any], now: datetime) -> None:
    exp, iat = claims["exp"], claims["iat"]
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (exp, iat)):
        raise InvalidClientTokenError("exp and iat must be integers")
    moment = now.timestamp()
    if exp <= moment:
        raise InvalidClientTokenError("expired")
    if iat > moment + ISSUED_AT_LEEWAY_SECONDS:
        raise InvalidClientTokenError("issued in the future")
