"""The hand-written reads and writes every request makes (core.db.ModelRows) give exactly what
the ORM gives, the Redis cache keeps its client (config.cache), and a query's serializer fields
are built once per thread (config.api.serializers.serializer_fields)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.forms.models import model_to_dict

from core import clock
from merchants.models import ApiKey, ApiSecret, Client, Merchant
from merchants.selectors import (
    api_key_find,
    api_secret_for_signing,
    api_secrets_for_verification,
    client_get,
)
from merchants.services import ClientData, api_secret_rotate, client_authenticate
from tests.factories import trade_url

pytestmark = pytest.mark.django_db


def columns(row: object) -> dict[str, object]:
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields}


def test_api_key_and_merchant_are_what_the_orm_reads(alice, bob):
    alice.merchant.risk_policy = {"maxExposure": "12.50", "levels": [1, 2]}
    alice.merchant.callback_disabled_at = clock.now()
    alice.merchant.save()
    ApiKey.objects.filter(merchant=alice.merchant).update(ip_whitelist=["10.0.0.0/8"])
    found = api_key_find(raw_key=alice.api_key)
    assert found is not None
    orm = ApiKey.objects.select_related("merchant").get(pk=found.pk)
    assert columns(found) == columns(orm)
    assert columns(found.merchant) == columns(orm.merchant)
    assert found.merchant.risk_policy == {"maxExposure": "12.50", "levels": [1, 2]}
    assert found.merchant_id == alice.merchant.pk != bob.merchant.pk


def test_a_wrong_secret_part_finds_nothing(alice):
    assert api_key_find(raw_key=alice.api_key[:-1] + "x") is None
    assert api_key_find(raw_key="nothing-like-a-key") is None


def test_secrets_are_what_the_orm_reads_newest_first(alice, bob):
    old = api_secret_for_signing(merchant=alice.merchant)
    new = api_secret_rotate(merchant=alice.merchant, grace=timedelta(hours=1))
    assert columns(api_secret_for_signing(merchant=alice.merchant)) == columns(
        ApiSecret.objects.get(pk=new.pk)
    )
    verifying = api_secrets_for_verification(merchant_id=str(alice.merchant.pk), now=clock.now())
    assert [s.pk for s in verifying] == [new.pk, old.pk]
    assert {s.merchant.pk for s in verifying} == {alice.merchant.pk}
    later = clock.now() + timedelta(hours=2)
    assert [
        s.pk for s in api_secrets_for_verification(merchant_id=str(alice.merchant.pk), now=later)
    ] == [new.pk]


def test_the_client_upsert_replaces_the_data_and_keeps_the_rest(alice, bob):
    def authenticate(merchant: Merchant, **data: object) -> Client:
        client_authenticate(
            merchant=merchant,
            platform_id="76561198000000001",
            trade_url=trade_url(39734273),  # the account of that platform id
            client_id="c-1",
            client_data=ClientData(**data),  # type: ignore[arg-type]
        )
        return Client.objects.get(merchant=merchant, platform_id="76561198000000001")

    first = authenticate(alice.merchant, total_wager=Decimal("10.50"), kyc_level=2)
    Client.objects.filter(pk=first.pk).update(verification_level=3)
    second = authenticate(alice.merchant, total_wager=Decimal("0.25"), kyc_hash="h")
    assert second.pk == first.pk
    assert second.created_at == first.created_at <= second.updated_at
    assert model_to_dict(
        second, fields=["total_wager", "kyc_level", "kyc_hash", "verification_level"]
    ) == {
        "total_wager": Decimal("0.25"),
        "kyc_level": 0,
        "kyc_hash": "h",
        "verification_level": 3,  # granted by verification: authentication never lowers it
    }
    assert authenticate(bob.merchant).pk != first.pk
    found = client_get(merchant=alice.merchant, platform_id="76561198000000001")
    assert found is not None
    assert columns(found) == columns(Client.objects.get(pk=first.pk))
    assert client_get(merchant=alice.merchant, platform_id="76561198000000002") is None


def test_the_cache_reuses_its_redis_client():
    cache.set("hot-reads", 1)
    first = cache._cache.get_client()
    assert cache.get("hot-reads") == 1
    assert cache._cache.get_client() is first


def test_a_query_is_parsed_with_fields_built_once_per_thread(api, alice, bob, monkeypatch):
    from rest_framework import serializers

    built: list[str] = []
    build = serializers.Serializer.get_fields

    def counting(self: serializers.Serializer) -> object:
        built.append(type(self).__name__)
        return build(self)

    monkeypatch.setattr(serializers.Serializer, "get_fields", counting)
    api.get("/secure/trades?limit=5", headers=alice.headers)  # may build this thread's fields
    built.clear()

    for actor in (alice, bob):
        response = api.get("/secure/trades?limit=5&type=withdraw", headers=actor.headers)
        assert response.status_code == 200, response.content
    assert api.get("/secure/trades?limit=0", headers=bob.headers).status_code == 400
    assert built == []
