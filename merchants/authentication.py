"""Who is calling: a merchant by its ``api-key`` header, or a client by its token."""

import uuid
from dataclasses import dataclass
from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from core import clock
from core.errors import DomainError
from merchants.models import ApiKey, Merchant
from merchants.selectors import api_key_find, api_key_refusal, api_secrets_for_verification
from merchants.services import api_key_touch
from merchants.tokens import InvalidClientTokenError, client_token_decode, client_token_merchant_id


@dataclass(frozen=True)
class MerchantCaller:
    merchant: Merchant
    api_key: ApiKey
    is_authenticated: bool = True


@dataclass(frozen=True)
class ClientCaller:
    merchant: Merchant
    platform_id: str
    trade_url: str
    client_id: str | None
    client_data: dict[str, Any]
    is_authenticated: bool = True


def request_ip(request: Request) -> str:
    """The caller's address; NUM_PROXIES says how many X-Forwarded-For hops to trust."""
    return str(BaseThrottle().get_ident(request))


class ApiKeyAuthentication(BaseAuthentication):
    #: What ``authenticate`` can refuse (for the OpenAPI).
    errors = (
        "UNAUTHORIZED",
        "MISSING_API_KEY",
        "INVALID_API_KEY",
        "ACCOUNT_DISABLED",
        "API_KEY_IP_DENIED",
    )

    def authenticate(self, request: Request) -> tuple[MerchantCaller, ApiKey]:
        raw_key = request.headers.get("api-key")
        if not raw_key:
            # 1100 when nothing identifies the caller, 1900 when a bearer came without the key.
            raise DomainError(
                "MISSING_API_KEY" if request.headers.get("Authorization") else "UNAUTHORIZED"
            )
        key = api_key_find(raw_key=raw_key)
        refusal = api_key_refusal(key=key, ip=request_ip(request), now=clock.real_now())
        if refusal is not None:
            raise DomainError(refusal)
        assert key is not None
        api_key_touch(api_key=key)
        return MerchantCaller(merchant=key.merchant, api_key=key), key

    def authenticate_header(self, request: Request) -> str:
        return "api-key"


def bearer_token(header: str) -> str:
    """The client token of an ``Authorization`` header, ``Bearer `` optional."""
    header = header.strip()
    scheme, _, rest = header.partition(" ")
    return rest.strip() if scheme.lower() == "bearer" else header


class ClientTokenAuthentication(BaseAuthentication):
    #: What ``authenticate`` can refuse (for the OpenAPI).
    errors = ("MISSING_BEARER", "INVALID_TOKEN")

    def authenticate(self, request: Request) -> tuple[ClientCaller, dict[str, Any]]:
        header = request.headers.get("Authorization", "").strip()
        if not header:
            raise DomainError("MISSING_BEARER")
        token = bearer_token(header)
        try:
            claims, merchant = _verify(token)
        except InvalidClientTokenError as exc:
            raise DomainError("INVALID_TOKEN") from exc
        client = claims.get("client")
        if not isinstance(client, dict) or not isinstance(client.get("platformID"), str):
            raise DomainError("INVALID_TOKEN")
        caller = ClientCaller(
            merchant=merchant,
            platform_id=client["platformID"],
            trade_url=str(client.get("tradeUrl") or ""),
            client_id=client.get("clientId"),
            client_data=client.get("clientData") or {},
        )
        return caller, claims

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"


def _verify(token: str) -> tuple[dict[str, Any], Merchant]:
    merchant_id = client_token_merchant_id(token)
    try:
        uuid.UUID(merchant_id)
    except ValueError as exc:
        raise InvalidClientTokenError("merchant id is not a uuid") from exc
    # A credential's lifetime is real time: another merchant's advance of the sandbox clock
    # neither ends a token or secret early nor extends it (docs/decisions.md, "Clocks").
    now = clock.real_now()
    secrets, merchant = api_secrets_for_verification(merchant_id=merchant_id, now=now)
    if merchant is None:
        raise InvalidClientTokenError("no secret for merchant")
    claims = client_token_decode(token, secrets=secrets, now=now)
    if not merchant.is_active:
        raise InvalidClientTokenError("merchant disabled")
    return claims, merchant
