"""The hand-written reads and writes every request makes (core.db.ModelRows) give exactly what
the ORM gives, the Redis cache keeps its client (config.cache), a query's serializer fields are
built once per thread (core.api.serializers.serializer_fields), and a kept API key is built
once per request."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db.models import Sum
from django.forms.models import model_to_dict

from core import clock
from core.shared_keys import shared_cache_key
from crypto.models import AddressAllocation
from crypto.selectors import allocation_find
from crypto.services.addresses import allocation_get
from merchants import selectors
from merchants.models import ApiKey, ApiSecret, Client, Merchant
from merchants.selectors import (
    api_key_find,
    api_secret_for_signing,
    api_secrets_for_verification,
    client_get,
)
from merchants.services import ClientData, api_secret_rotate, client_authenticate
from sandbox.chains import SandboxChains
from sandbox.models import SandboxBot, SandboxBotState, SandboxChain
from sandbox.platform import SandboxPlatform, sandbox_fleet
from tests.factories import trade_url
from tests.trading.factories import CatalogItemFactory, SandboxBotFactory
from trading.accounts.selectors.collateral import EXPOSED_STATUSES, client_collateral_exposure
from trading.accounts.selectors.inventory import client_deposit_facts_get, deposit_facts_get
from trading.models import CatalogItem, GameSettings, Trade

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


def test_keys_built_from_the_same_kept_rows_share_no_json(alice):
    alice.merchant.risk_policy = {"maxExposure": "12.50", "levels": [1, {"at": [2]}]}
    alice.merchant.save()
    ApiKey.objects.filter(merchant=alice.merchant).update(ip_whitelist=["10.0.0.0/8"])
    rows = selectors._key_rows(alice.api_key[: ApiKey.PREFIX_LENGTH])
    assert rows is not None
    first, second = (selectors._key_instance(rows, alice.api_key) for _ in range(2))
    assert first is not None
    assert second is not None
    first.ip_whitelist.append("192.168.0.0/16")
    first.scopes.clear()
    first.merchant.risk_policy["levels"][1]["at"].append(3)
    assert second.ip_whitelist == ["10.0.0.0/8"]
    assert second.scopes == rows[0][selectors._KEYS.index("scopes")] != []
    assert second.merchant.risk_policy == {"maxExposure": "12.50", "levels": [1, {"at": [2]}]}


def test_the_gate_keys_are_the_caches_and_follow_its_settings(settings):
    assert shared_cache_key("market-version") == cache.make_and_validate_key("market-version")
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": "other"}}
    assert shared_cache_key("market-version") == cache.make_and_validate_key("market-version")
    assert shared_cache_key("market-version").startswith("other:")


def test_a_wrong_secret_part_finds_nothing(alice):
    assert api_key_find(raw_key=alice.api_key[:-1] + "x") is None
    assert api_key_find(raw_key="nothing-like-a-key") is None


def test_secrets_are_what_the_orm_reads_newest_first(alice, bob):
    old = api_secret_for_signing(merchant=alice.merchant)
    new = api_secret_rotate(merchant=alice.merchant, grace=timedelta(hours=1))
    assert columns(api_secret_for_signing(merchant=alice.merchant)) == columns(
        ApiSecret.objects.get(pk=new.pk)
    )
    verifying, merchant = api_secrets_for_verification(
        merchant_id=str(alice.merchant.pk), now=clock.now()
    )
    assert old is not None
    assert verifying == [new.secret, old.secret]
    assert merchant is not None
    assert columns(merchant) == columns(Merchant.objects.get(pk=alice.merchant.pk))
    later = clock.now() + timedelta(hours=2)
    assert api_secrets_for_verification(merchant_id=str(alice.merchant.pk), now=later)[0] == [
        new.secret
    ]
    bobs = ApiSecret.objects.get(merchant=bob.merchant)
    assert api_secrets_for_verification(merchant_id=str(bob.merchant.pk), now=later) == (
        [bobs.secret],
        bob.merchant,
    )
    nobody = "00000000-0000-4000-8000-000000000000"
    assert api_secrets_for_verification(merchant_id=nobody, now=later) == ([], None)


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


def _client(merchant: Merchant, partner: int, kyc_hash: str = "") -> Client:
    return Client.objects.create(
        merchant=merchant,
        platform_id=str(76561197960265728 + partner),
        trade_url=trade_url(partner),
        kyc_hash=kyc_hash,
        total_wager=Decimal("12.50"),
        registration_date=clock.now(),
    )


def _instant(client: Client, provider: str, status: str = "hold", instant: bool = True) -> None:
    now = clock.now()
    Trade.objects.create(
        merchant=client.merchant,
        client=client,
        type="deposit",
        source="client",
        status=status,
        game=730,
        is_instant=instant,
        collateral_provider=Decimal(provider),
        total_price=Decimal(provider),
        created_at=now,
        updated_at=now,
    )


def test_the_inventory_facts_are_what_the_orm_reads(alice, bob):
    GameSettings.objects.update_or_create(game=252490, defaults={"deposits_paused": True})
    CatalogItemFactory(reference_price=Decimal("1.00"))
    ann, ann_too = _client(alice.merchant, 1, "ann"), _client(alice.merchant, 2, "ann")
    cid, other = _client(alice.merchant, 3), _client(bob.merchant, 1, "ann")
    _instant(ann, "1.10")
    _instant(ann_too, "2.25")
    _instant(ann_too, "7.00", status="completed")
    _instant(ann, "9.00", instant=False)
    _instant(cid, "4.05")
    _instant(other, "20.00")

    def orm(client: Client) -> Decimal:
        group = (
            Client.objects.filter(merchant_id=client.merchant_id, kyc_hash=client.kyc_hash)
            if client.kyc_hash
            else Client.objects.filter(pk=client.pk)
        )
        total: Decimal = Trade.objects.filter(
            client__in=group, is_instant=True, status__in=EXPOSED_STATUSES
        ).aggregate(total=Sum("collateral_provider", default=Decimal("0.00")))["total"]
        return total

    for client in (ann, ann_too, cid, other):
        facts = client_deposit_facts_get(
            game=730, merchant=client.merchant, platform_id=client.platform_id
        )
        assert facts.client is not None
        assert columns(facts.client) == columns(Client.objects.get(pk=client.pk))
        assert facts.exposure == client_collateral_exposure(client=client) == orm(client)
        assert (facts.paused, facts.priced) == (False, True)
    assert [client_collateral_exposure(client=c) for c in (ann, ann_too, cid, other)] == [
        Decimal("3.35"),
        Decimal("3.35"),
        Decimal("4.05"),
        Decimal("20.00"),
    ]

    nobody = client_deposit_facts_get(game=252490, merchant=alice.merchant, platform_id="1")
    assert (nobody.paused, nobody.priced, nobody.client, nobody.exposure) == (
        True,
        True,
        None,
        Decimal("0.00"),
    )
    GameSettings.objects.filter(game=252490).delete()  # no row: not paused
    assert deposit_facts_get(game=252490).paused is False
    Trade.objects.all().delete()
    CatalogItem.objects.update(reference_price=Decimal("0"))
    assert deposit_facts_get(game=730).priced is False


def test_the_sandbox_fleet_and_chain_status_are_what_the_orm_reads(alice, bob):
    SandboxBot.objects.all().delete()
    assert SandboxPlatform().fleet_status(tenant=str(alice.merchant.pk)) == "offline"
    up, down = SandboxBotFactory(), SandboxBotFactory()
    SandboxBotState.objects.create(merchant=alice.merchant, bot=down, status="offline")
    SandboxBotState.objects.create(merchant=bob.merchant, bot=up, status="degraded")
    SandboxBotState.objects.create(merchant=bob.merchant, bot=down, status="offline")
    for actor, status in ((alice, "online"), (bob, "degraded")):
        tenant = str(actor.merchant.pk)
        assert {bot.status for bot in sandbox_fleet(tenant=tenant)} >= {status}
        assert SandboxPlatform().fleet_status(tenant=tenant) == status

    SandboxChain.objects.create(merchant=alice.merchant, chain="ETH", paused=True)
    SandboxChain.objects.create(merchant=bob.merchant, chain="BSC", paused=False)
    chains = SandboxChains()
    assert chains.status("ETH", tenant=str(alice.merchant.pk)) == "paused"
    assert chains.status("BSC", tenant=str(alice.merchant.pk)) == "active"
    assert chains.status("ETH", tenant=str(bob.merchant.pk)) == "active"
    assert chains.status("BSC", tenant=str(bob.merchant.pk)) == "active"


def test_the_address_allocation_is_what_the_orm_reads(alice, bob):
    assert allocation_find(merchant=alice.merchant, platform_id="76561198000000001") is None
    made = allocation_get(merchant=alice.merchant, platform_id="76561198000000001")
    found = allocation_find(merchant=alice.merchant, platform_id="76561198000000001")
    assert found is not None
    assert columns(found) == columns(AddressAllocation.objects.get(pk=made.pk))
    assert found.evm_address
    assert allocation_find(merchant=bob.merchant, platform_id="76561198000000001") is None


def test_a_kept_api_key_is_built_once_per_request(api, alice, monkeypatch):
    assert api.get("/sandbox/clock", headers=alice.headers).status_code == 200  # keeps the key
    built: list[str] = []
    build = selectors._key_instance

    def counting(rows: object, raw_key: str) -> object:
        built.append(raw_key)
        return build(rows, raw_key)  # type: ignore[arg-type]

    monkeypatch.setattr(selectors, "_key_instance", counting)
    for _ in range(2):
        assert api.get("/sandbox/clock", headers=alice.headers).status_code == 200
    assert built == [alice.api_key, alice.api_key]
