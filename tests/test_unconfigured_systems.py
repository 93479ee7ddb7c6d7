"""Outside the sandbox an outside system nobody configured (its setting unset) is the domain's
"unconfigured" adapter: every call answers its interface's unavailable error, and the API says so
honestly (never a 500, never a made-up answer), leaving nothing written."""

from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest

from crypto.chains import get_chains
from crypto.chains.unconfigured import UnconfiguredChains
from crypto.models import CryptoWithdrawal
from merchants.models import Merchant
from merchants.verification import get_identity_provider
from merchants.verification.models import VerificationProcess
from merchants.verification.unconfigured import UnconfiguredIdentityProvider
from tests.factories import assert_error, platform_id, trade_url
from tests.trading.factories import CatalogItemFactory
from tests.trading.helpers import client_token, ok
from trading.marketplace import get_marketplace
from trading.marketplace.unconfigured import UnconfiguredMarketplace
from trading.models import Trade
from trading.platform import get_platform
from trading.platform.unconfigured import UnconfiguredPlatform
from wallet.selectors import wallet_balances
from wallet.services import wallet_admin_credit

pytestmark = pytest.mark.django_db

GETTERS = {
    "GAME_PLATFORM": get_platform,
    "MARKETPLACE": get_marketplace,
    "IDENTITY_PROVIDER": get_identity_provider,
    "CRYPTO_CHAINS": get_chains,
}


@pytest.fixture
def unconfigured(settings) -> Iterator[Callable[[str], None]]:
    """Unsets an outside system's setting, as a deployment without SANDBOX that names none."""

    def switch_off(name: str) -> None:
        setattr(settings, name, "")
        GETTERS[name].cache_clear()

    yield switch_off
    for getter in GETTERS.values():
        getter.cache_clear()  # the settings fixture puts the sandbox's adapters back


def test_an_unset_setting_gives_the_unconfigured_adapter(unconfigured):
    for name in GETTERS:
        unconfigured(name)
    assert isinstance(get_platform(), UnconfiguredPlatform)
    assert isinstance(get_marketplace().adapter, UnconfiguredMarketplace)
    assert isinstance(get_identity_provider(), UnconfiguredIdentityProvider)
    assert isinstance(get_chains(), UnconfiguredChains)


def test_the_game_platform_answers_platform_unavailable(api, alice, unconfigured):
    unconfigured("GAME_PLATFORM")
    CatalogItemFactory(id="730-000100", market_hash_name="AK-47 | Redline (Field-Tested)")
    url = trade_url(1)

    check = api.post(
        "/secure/check-tradeurl", {"tradeurl": url}, format="json", headers=alice.headers
    )
    checked = ok(check)
    assert checked["state"] == 10  # PlatformUnavailable, never cached

    inventory = api.get("/secure/inventory", {"tradeUrl": url}, headers=alice.headers)
    assert_error(inventory, 424, 31, "PLATFORM_UNAVAILABLE")

    sell = {"tradeUrl": url, "items": [{"itemId": "10000000001", "price": 1}]}
    response = api.post("/secure/sell", sell, format="json", headers=alice.headers)
    assert_error(response, 424, 31, "PLATFORM_UNAVAILABLE")
    assert not Trade.objects.exists()


def test_the_marketplace_answers_service_unavailable(api, alice, unconfigured):
    unconfigured("MARKETPLACE")
    Merchant.objects.filter(pk=alice.merchant.pk).update(callback_url="https://example.com/hooks")
    CatalogItemFactory(id="730-000100", market_hash_name="AK-47 | Redline (Field-Tested)")
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("100.00"), reason="test")
    before = wallet_balances(merchant=alice.merchant)

    for path in ("/secure/market", "/secure/prices"):
        assert_error(api.get(path, headers=alice.headers), 503, 1008, "SERVICE_UNAVAILABLE")

    buy = {
        "tradeUrl": trade_url(1),
        "items": [{"itemId": "9f1c2a4e-7b3d-4c5e-8f6a-0b1c2d3e4f5a", "price": 10}],
    }
    response = api.post("/secure/buy", buy, format="json", headers=alice.headers)
    assert_error(response, 503, 1008, "SERVICE_UNAVAILABLE")
    assert not Trade.objects.exists()
    assert wallet_balances(merchant=alice.merchant) == before


def test_the_identity_provider_answers_verification_not_available(api, alice, unconfigured):
    unconfigured("IDENTITY_PROVIDER")
    token = client_token(api, alice)

    response = api.post(
        "/client/verification/start",
        {"email": "ann@example.com"},
        format="json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert_error(response, 503, 3008, "VERIFICATION_NOT_AVAILABLE")
    assert not VerificationProcess.objects.exists()
    # Nothing pushes notifications either: the provider's route is not found.
    notification = api.post(
        "/verification/provider-notifications", {"type": "applicantReviewed"}, format="json"
    )
    assert_error(notification, 404, 1002, "NOT_FOUND")


def test_the_chains_answer_onchain_disabled(api, alice, unconfigured):
    unconfigured("CRYPTO_CHAINS")
    Merchant.objects.filter(pk=alice.merchant.pk).update(callback_url="https://example.com/hooks")
    wallet_admin_credit(merchant=alice.merchant, amount=Decimal("100.00"), reason="test")
    before = wallet_balances(merchant=alice.merchant)

    for chain in ("ETH", "SOL"):
        response = api.get(
            "/secure/crypto/deposit-address",
            {"chain": chain, "token": "USDC", "platformId": platform_id(1)},
            headers=alice.headers,
        )
        assert_error(response, 503, 2500, "ONCHAIN_DISABLED")

    cashout = {
        "platformId": platform_id(1),
        "chain": "ETH",
        "token": "USDC",
        "address": "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
        "amountCents": 2500,
        "requestId": "req-00000001",
    }
    response = api.post("/secure/crypto/withdraw", cashout, format="json", headers=alice.headers)
    assert_error(response, 503, 2500, "ONCHAIN_DISABLED")
    assert not CryptoWithdrawal.objects.exists()
    assert wallet_balances(merchant=alice.merchant) == before
