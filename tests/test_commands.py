"""Management commands: create_merchant (decisions 9) and check_wallet."""

import json
import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from merchants.models import ApiKey, Merchant
from merchants.selectors import api_key_hash, api_secret_for_signing
from tests.factories import assert_error, auth_body
from wallet.models import Account
from wallet.selectors import wallet_balances, wallet_invariants_check

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"
API_KEY = re.compile(r"^tsk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$")


def create_merchant(*args: str) -> tuple[dict, Merchant]:
    out = StringIO()
    call_command("create_merchant", *args, stdout=out)
    printed = out.getvalue()
    assert len(printed.strip().splitlines()) == 1, printed
    data = json.loads(printed)  # exactly one JSON object and nothing else
    assert isinstance(data, dict)
    assert set(data) == {"merchantId", "apiKey", "webhookSecret"}
    merchant = Merchant.objects.get(pk=data["merchantId"])
    return data, merchant


def authenticate(api, raw_key: str, **extra):
    return api.post(AUTH, auth_body(), format="json", headers={"api-key": raw_key}, **extra)


@pytest.fixture
def accept_callback_tests(monkeypatch) -> list[str]:
    """The callback URL's signed test event, answered 2xx without the network; the URLs tested."""
    tested: list[str] = []

    def accept(*, merchant, url):
        assert merchant.webhook_secret.startswith("whsec_")
        tested.append(url)

    monkeypatch.setattr("merchants.services.callback_url_test", accept)
    return tested


class TestCreateMerchant:
    def test_defaults(self, api):
        data, merchant = create_merchant("--name", "Carol")
        assert merchant.name == "Carol"
        assert merchant.is_verified is False
        assert merchant.callback_url == ""
        assert merchant.instant_deposits_enabled is False
        assert merchant.is_active
        assert API_KEY.match(data["apiKey"])
        assert data["webhookSecret"] == merchant.webhook_secret
        assert data["webhookSecret"].startswith("whsec_")
        key = ApiKey.objects.get(merchant=merchant)
        assert key.key_hash == api_key_hash(data["apiKey"])
        assert sorted(key.scopes) == ["CORE_ACCESS", "LEDGER_READ"]
        assert key.ip_whitelist == []
        assert api_secret_for_signing(merchant=merchant) is not None
        assert wallet_balances(merchant=merchant)["available"] == Decimal("0.00")
        assert authenticate(api, data["apiKey"]).status_code == 200

    def test_name_is_required(self):
        with pytest.raises(CommandError, match="--name"):
            call_command("create_merchant", stdout=StringIO())
        assert not Merchant.objects.exists()

    def test_verified(self):
        _, merchant = create_merchant("--name", "V", "--verified")
        assert merchant.is_verified is True

    def test_callback_url(self, accept_callback_tests):
        _, merchant = create_merchant("--name", "C", "--callback-url", "https://example.com/cb")
        assert merchant.callback_url == "https://example.com/cb"
        assert accept_callback_tests == ["https://example.com/cb"]  # tested before it was saved

    def test_callback_url_that_refuses_the_test_event_creates_nothing(self, monkeypatch):
        from core.errors import DomainError

        def refuse(*, merchant, url):
            raise DomainError("CALLBACK_URL_TEST_FAILED", "The test event got 500.")

        monkeypatch.setattr("merchants.services.callback_url_test", refuse)
        with pytest.raises(CommandError, match="test event"):
            call_command(
                "create_merchant",
                "--name",
                "X",
                "--callback-url",
                "https://x.test/cb",
                stdout=StringIO(),
            )
        assert not Merchant.objects.exists()

    def test_instant_deposits(self):
        _, merchant = create_merchant("--name", "I", "--instant-deposits")
        assert merchant.instant_deposits_enabled is True

    @pytest.mark.parametrize("amount", ["150.25", "1", "10000", "0.01", "9999999999999999.99"])
    def test_balance(self, api, amount):
        data, merchant = create_merchant("--name", "B", "--balance", amount)
        balances = wallet_balances(merchant=merchant)
        assert balances["available"] == Decimal(amount)
        assert balances["locked"] == balances["escrow"] == balances["collateral"] == Decimal(0)
        assert wallet_invariants_check().clean
        world = Account.objects.get(merchant=None, kind=Account.Kind.WORLD)
        assert world.balance == -Decimal(amount)
        assert authenticate(api, data["apiKey"]).status_code == 200

    def test_two_merchants_with_balances_stay_separate(self):
        _, first = create_merchant("--name", "One", "--balance", "10")
        _, second = create_merchant("--name", "Two", "--balance", "25.50")
        assert wallet_balances(merchant=first)["available"] == Decimal("10")
        assert wallet_balances(merchant=second)["available"] == Decimal("25.50")
        assert wallet_invariants_check().clean

    def test_scopes_ledger_only(self, api):
        data, merchant = create_merchant("--name", "L", "--scopes", "LEDGER_READ")
        assert ApiKey.objects.get(merchant=merchant).scopes == ["LEDGER_READ"]
        assert_error(authenticate(api, data["apiKey"]), 403, 1903, "API_KEY_SCOPE_DENIED")

    def test_scopes_core_only(self, api):
        data, merchant = create_merchant("--name", "K", "--scopes", "CORE_ACCESS")
        assert ApiKey.objects.get(merchant=merchant).scopes == ["CORE_ACCESS"]
        assert authenticate(api, data["apiKey"]).status_code == 200

    def test_scopes_with_spaces(self):
        _, merchant = create_merchant("--name", "S", "--scopes", " LEDGER_READ , CORE_ACCESS ")
        assert ApiKey.objects.get(merchant=merchant).scopes == ["CORE_ACCESS", "LEDGER_READ"]

    def test_ip(self, api):
        data, merchant = create_merchant("--name", "P", "--ip", "10.0.0.0/8", "2001:db8::/32")
        assert ApiKey.objects.get(merchant=merchant).ip_whitelist == ["10.0.0.0/8", "2001:db8::/32"]
        assert_error(authenticate(api, data["apiKey"]), 403, 1904, "API_KEY_IP_DENIED")
        assert authenticate(api, data["apiKey"], REMOTE_ADDR="10.0.0.5").status_code == 200
        assert authenticate(api, data["apiKey"], REMOTE_ADDR="2001:db8::9").status_code == 200

    def test_every_option_together(self, api, accept_callback_tests):
        data, merchant = create_merchant(
            "--name",
            "All",
            "--verified",
            "--callback-url",
            "https://example.com/hook",
            "--balance",
            "99.99",
            "--instant-deposits",
            "--scopes",
            "CORE_ACCESS",
            "--ip",
            "127.0.0.1/32",
        )
        assert merchant.is_verified
        assert merchant.callback_url == "https://example.com/hook"
        assert merchant.instant_deposits_enabled
        assert wallet_balances(merchant=merchant)["available"] == Decimal("99.99")
        key = ApiKey.objects.get(merchant=merchant)
        assert key.scopes == ["CORE_ACCESS"]
        assert key.ip_whitelist == ["127.0.0.1/32"]
        assert authenticate(api, data["apiKey"]).status_code == 200

    def test_each_run_makes_a_new_merchant_and_key(self):
        first, _ = create_merchant("--name", "Same")
        second, _ = create_merchant("--name", "Same")
        assert first["merchantId"] != second["merchantId"]
        assert first["apiKey"] != second["apiKey"]
        assert first["webhookSecret"] != second["webhookSecret"]

    @pytest.mark.parametrize("scopes", ["FOO", "CORE_ACCESS,FOO", "", ",", "core_access"])
    def test_bad_scopes_fail_and_create_nothing(self, scopes):
        with pytest.raises(CommandError, match="scopes"):
            call_command("create_merchant", "--name", "X", "--scopes", scopes, stdout=StringIO())
        assert not Merchant.objects.exists()

    @pytest.mark.parametrize(
        "balance", ["abc", "-5", "0", "1.001", "NaN", "sNaN", "Infinity", "1e400", "1e16", ""]
    )
    def test_bad_balance_fails_and_creates_nothing(self, balance):
        with pytest.raises(CommandError):
            call_command("create_merchant", "--name", "X", "--balance", balance, stdout=StringIO())
        assert not Merchant.objects.exists()
        assert not Account.objects.exists()

    @pytest.mark.parametrize("cidrs", [["not-a-cidr"], ["10.0.0.0/8", "10.0.0.0/33"]])
    def test_bad_ip_fails_and_creates_nothing(self, cidrs):
        with pytest.raises(CommandError, match="CIDR"):
            call_command("create_merchant", "--name", "X", "--ip", *cidrs, stdout=StringIO())
        assert not Merchant.objects.exists()
        assert not ApiKey.objects.exists()

    def test_ip_is_normalised_to_a_network(self):
        _, merchant = create_merchant("--name", "N", "--ip", "10.1.2.3/8", "192.0.2.1")
        assert ApiKey.objects.get(merchant=merchant).ip_whitelist == ["10.0.0.0/8", "192.0.2.1/32"]


class TestCheckWallet:
    def test_clean_database_passes(self):
        out = StringIO()
        call_command("check_wallet", stdout=out, stderr=StringIO())
        assert "wallet invariants hold" in out.getvalue()

    def test_passes_after_credits(self):
        create_merchant("--name", "A", "--balance", "100")
        create_merchant("--name", "B", "--balance", "0.50")
        out = StringIO()
        call_command("check_wallet", stdout=out, stderr=StringIO())
        assert "wallet invariants hold" in out.getvalue()

    def test_a_drifted_balance_fails(self):
        _, merchant = create_merchant("--name", "A", "--balance", "100")
        Account.objects.filter(merchant=merchant, kind=Account.Kind.AVAILABLE).update(
            balance=Decimal("100.01")
        )
        err = StringIO()
        with pytest.raises(CommandError, match="invariants broken"):
            call_command("check_wallet", stdout=StringIO(), stderr=err)
        assert "balance differs" in err.getvalue()
        assert "100.01" in err.getvalue()

    def test_a_negative_held_balance_fails(self):
        _, merchant = create_merchant("--name", "A")
        from django.db import IntegrityError, transaction

        # The database refuses it outright; check_wallet would be the second line of defence.
        with pytest.raises(IntegrityError), transaction.atomic():
            Account.objects.create(merchant=merchant, kind=Account.Kind.ESCROW, balance=-1)
