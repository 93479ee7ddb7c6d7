"""Factories for the rows tests start from. Keys and secrets go through the services, so tests
see them exactly as merchants get them."""

import base64
import secrets
import uuid
from dataclasses import dataclass

import factory
from factory.django import DjangoModelFactory

from merchants.models import ApiSecret, Merchant, Scope
from merchants.services import api_key_create

TRADE_URL_TEMPLATE = "https://steamcommunity.com/tradeoffer/new/?partner={partner}&token=Ab3_x-Z9"
PLATFORM_ID_BASE = 76561197960265728


class MerchantFactory(DjangoModelFactory):
    class Meta:
        model = Merchant
        skip_postgeneration_save = True  # the hook writes its own row; nothing to re-save

    name = factory.Sequence(lambda n: f"Merchant {n}")
    is_verified = True
    webhook_secret = factory.LazyFunction(
        lambda: "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    )

    @factory.post_generation
    def api_secret(self, create: bool, extracted: bool | None, **kwargs: object) -> None:
        if create and extracted is not False:
            ApiSecret.objects.create(merchant=self, secret=secrets.token_urlsafe(48))


@dataclass
class Actor:
    """A merchant as the API sees it: the row and a raw API key."""

    merchant: Merchant
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"api-key": self.api_key}


def make_actor(
    *, scopes: tuple[str, ...] = (Scope.CORE_ACCESS, Scope.LEDGER_READ), **merchant_fields: object
) -> Actor:
    merchant = MerchantFactory(**merchant_fields)
    _, raw_key = api_key_create(merchant=merchant, scopes=scopes)
    return Actor(merchant=merchant, api_key=raw_key)


def trade_url(partner: int) -> str:
    return TRADE_URL_TEMPLATE.format(partner=partner)


def platform_id(partner: int) -> str:
    return str(PLATFORM_ID_BASE + partner)


def add_api_key(
    merchant: Merchant,
    *,
    scopes: tuple[str, ...] = (Scope.CORE_ACCESS, Scope.LEDGER_READ),
    ip_whitelist: tuple[str, ...] = (),
    is_admin: bool = False,
) -> str:
    """Another key of an existing merchant; returns the raw key."""
    _, raw_key = api_key_create(
        merchant=merchant, scopes=scopes, ip_whitelist=ip_whitelist, is_admin=is_admin
    )
    return raw_key


def auth_body(partner: int = 1, **fields: object) -> dict[str, object]:
    """A valid POST /auth/authenticate-client body for the platform user behind ``partner``."""
    return {
        "clientPlatformId": platform_id(partner),
        "clientTradeUrl": trade_url(partner),
        **fields,
    }


def assert_error(response, status: int, code: int, key: str) -> dict:
    """The error envelope with this status, code and key; returns its ``error`` object."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"requestId", "success", "error"}
    assert body["success"] is False
    assert body["error"]["code"] == code
    assert body["error"]["key"] == key
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    assert_request_id(response)
    return body["error"]


def assert_request_id(response) -> str:
    request_id = response.json()["requestId"]
    assert str(uuid.UUID(request_id, version=4)) == request_id
    assert response["X-Request-Id"] == request_id
    return request_id
