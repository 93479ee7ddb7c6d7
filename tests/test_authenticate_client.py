"""POST /auth/authenticate-client: the body rules of contract 4.1 and 2.6."""

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from merchants.models import Client
from tests.factories import PLATFORM_ID_BASE, assert_error, auth_body, platform_id, trade_url

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"
HOST = "https://steamcommunity.com/tradeoffer/new/"


def post(api, actor, body):
    return api.post(AUTH, body, format="json", headers=actor.headers)


def accepted(api, actor, body) -> Client:
    response = post(api, actor, body)
    assert response.status_code == 200, response.content
    assert response.json()["success"] is True
    return Client.objects.get(merchant=actor.merchant, platform_id=body["clientPlatformId"])


def refused(api, actor, body, *paths: str) -> dict[str, str]:
    """VALIDATION_FAILED naming exactly ``paths``, with nothing written."""
    before = Client.objects.count()
    error = assert_error(post(api, actor, body), 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == set(paths), error
    assert Client.objects.count() == before
    return error["fields"]


class TestPlatformId:
    @pytest.mark.parametrize("partner", [0, 1, 22202, 4294967295, 9999999999])
    def test_valid_platform_ids(self, api, alice, partner):
        client = accepted(api, alice, auth_body(partner))
        assert client.platform_id == str(PLATFORM_ID_BASE + partner)
        assert client.trade_url == trade_url(partner)

    @pytest.mark.parametrize(
        "value",
        [
            "7656119796026572",  # 16 digits
            "765611979602657290",  # 18 digits
            "76562197960265729",  # wrong prefix
            "7656119796026572a",
            "76561-97960265729",
            "",
            "+76561197960265729",
        ],
    )
    def test_invalid_platform_ids(self, api, alice, value):
        refused(api, alice, auth_body(clientPlatformId=value), "clientPlatformId")

    @pytest.mark.parametrize("value", [76561197960265729, None, True, ["76561197960265729"]])
    def test_platform_id_must_be_a_string(self, api, alice, value):
        refused(api, alice, auth_body(clientPlatformId=value), "clientPlatformId")

    def test_unicode_digits_never_pass(self, api, alice):
        arabic = "76561" + "\u0661" * 12  # ARABIC-INDIC DIGIT ONE
        error = assert_error(
            post(api, alice, auth_body(clientPlatformId=arabic)), 400, 1001, ("VALIDATION_FAILED")
        )
        assert set(error["fields"]) & {"clientPlatformId", "clientTradeUrl"}
        assert Client.objects.count() == 0


class TestTradeUrl:
    @pytest.mark.parametrize(
        "url",
        [
            "http://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "https://steamcommunity.com.evil.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "https://evil.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "https://evil.com/?https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "https://steamcommunity.com/tradeoffer/new?partner=1&token=Ab3_x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?token=Ab3_x-Z9&partner=1",
            "https://steamcommunity.com/tradeoffer/new/?partner=&token=Ab3_x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?partner=12345678901&token=Ab3_x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?partner=1a&token=Ab3_x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9X",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3.x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3 x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9&x=1",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=",
            "https://steamcommunity.com/tradeoffer/new/?partner=1",
            "steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "",
        ],
    )
    def test_invalid_trade_urls(self, api, alice, url):
        refused(api, alice, auth_body(1, clientTradeUrl=url), "clientTradeUrl")

    @pytest.mark.parametrize("token", ["abcdefgh", "ABCDEFGH", "01234567", "________", "--------"])
    def test_token_alphabet(self, api, alice, token):
        url = f"{HOST}?partner=5&token={token}"
        assert accepted(api, alice, auth_body(5, clientTradeUrl=url)).trade_url == url

    @pytest.mark.parametrize("value", [1, None, {"url": trade_url(1)}])
    def test_trade_url_must_be_a_string(self, api, alice, value):
        refused(api, alice, auth_body(1, clientTradeUrl=value), "clientTradeUrl")

    def test_trade_url_must_belong_to_the_platform_id(self, api, alice):
        """A well-formed URL of another account is the service's refusal (13), not a malformed
        body: the document cannot compare the two fields."""
        body = auth_body(1, clientTradeUrl=trade_url(2))
        before = Client.objects.count()

        error = assert_error(post(api, alice, body), 400, 13, "INVALID_TRADEURL")

        assert "platform id" in error["fields"]["clientTradeUrl"]
        assert Client.objects.count() == before

    def test_partner_with_leading_zeros_is_the_same_account(self, api, alice):
        url = f"{HOST}?partner=0000000007&token=Ab3_x-Z9"
        client = accepted(api, alice, auth_body(7, clientTradeUrl=url))
        assert client.platform_id == platform_id(7)

    def test_host_is_configurable(self, api, alice, settings):
        from merchants.tradeurls import trade_url_pattern

        settings.TRADE_URL_HOST = "trade.example.test"
        trade_url_pattern.cache_clear()
        try:
            other = "https://trade.example.test/tradeoffer/new/?partner=1&token=Ab3_x-Z9"
            accepted(api, alice, auth_body(1, clientTradeUrl=other))
            refused(api, alice, auth_body(2), "clientTradeUrl")
        finally:
            trade_url_pattern.cache_clear()

    def test_partner_must_be_ascii_digits(self, api, alice):
        url = f"{HOST}?partner=\u0661&token=Ab3_x-Z9"  # ARABIC-INDIC DIGIT ONE
        refused(api, alice, auth_body(1, clientTradeUrl=url), "clientTradeUrl")


class TestClientId:
    def test_128_characters_are_fine(self, api, alice):
        assert accepted(api, alice, auth_body(clientId="x" * 128)).client_id == "x" * 128

    def test_129_characters_are_refused(self, api, alice):
        refused(api, alice, auth_body(clientId="x" * 129), "clientId")

    def test_null_means_not_given(self, api, alice):
        assert accepted(api, alice, auth_body(clientId=None)).client_id == ""

    @pytest.mark.parametrize("value", [123, True, ["a"], {"id": "a"}])
    def test_must_be_a_string(self, api, alice, value):
        refused(api, alice, auth_body(clientId=value), "clientId")

    def test_unicode_counts_characters(self, api, alice):
        assert accepted(api, alice, auth_body(clientId="é" * 128)).client_id == "é" * 128


class TestClientData:
    def test_omitted_or_null_or_empty_gives_the_defaults(self, api, alice):
        for body in (auth_body(), auth_body(clientData=None), auth_body(clientData={})):
            client = accepted(api, alice, body)
            assert client.total_wager == Decimal("0.00")
            assert client.kyc_level == 0
            assert client.fiat_deposits is False
            assert client.crypto_deposits is False
            assert client.registration_date is None
            assert client.kyc_hash == ""

    @pytest.mark.parametrize(
        ("sent", "stored"),
        [
            (0, Decimal("0.00")),
            (Decimal("0.01"), Decimal("0.01")),
            (Decimal("1200.50"), Decimal("1200.50")),
            (Decimal("1200.509"), Decimal("1200.50")),  # kept to the cent, rounded down
            (Decimal("0.009"), Decimal("0.00")),
            (10**13, Decimal(10**13)),
        ],
    )
    def test_total_wager(self, api, alice, sent, stored):
        client = accepted(api, alice, auth_body(clientData={"totalWager": sent}))
        assert client.total_wager == stored

    @pytest.mark.parametrize(
        "value",
        [Decimal("-0.01"), -1, "5", "1200.50", True, None, 10**13 + 1, [1], {}],
    )
    def test_total_wager_refused(self, api, alice, value):
        refused(api, alice, auth_body(clientData={"totalWager": value}), "clientData.totalWager")

    @pytest.mark.parametrize(
        ("number", "path"),
        [
            ("1e400", "clientData.totalWager"),
            ("-1e400", "clientData.totalWager"),
            ("1" + "0" * 5000, "body"),  # beyond Python's int-from-string limit: malformed
        ],
    )
    def test_extreme_numbers_are_refused_not_a_crash(self, api, alice, number, path):
        body = json.dumps(auth_body())[:-1] + f', "clientData": {{"totalWager": {number}}}}}'
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert set(error["fields"]) == {path}

    def test_a_wager_below_a_cent_is_kept_as_zero(self, api, alice):
        body = json.dumps(auth_body())[:-1] + ', "clientData": {"totalWager": 1e-400}}'
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        assert response.status_code == 200
        assert Client.objects.get().total_wager == Decimal("0.00")

    @pytest.mark.parametrize("value", [0, 1, 2, 3])
    def test_kyc_level(self, api, alice, value):
        assert accepted(api, alice, auth_body(clientData={"kycLevel": value})).kyc_level == value

    @pytest.mark.parametrize("value", [-1, 4, 100, Decimal("1.5"), "2", True, False, None])
    def test_kyc_level_refused(self, api, alice, value):
        refused(api, alice, auth_body(clientData={"kycLevel": value}), "clientData.kycLevel")

    @pytest.mark.parametrize("field", ["fiatDeposits", "cryptoDeposits"])
    def test_booleans(self, api, alice, field):
        client = accepted(api, alice, auth_body(clientData={field: True}))
        column = {"fiatDeposits": "fiat_deposits", "cryptoDeposits": "crypto_deposits"}[field]
        assert getattr(client, column) is True

    @pytest.mark.parametrize("field", ["fiatDeposits", "cryptoDeposits"])
    @pytest.mark.parametrize("value", [1, 0, "true", "false", "yes", None, []])
    def test_booleans_are_strict(self, api, alice, field, value):
        refused(api, alice, auth_body(clientData={field: value}), f"clientData.{field}")

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("2020-01-02T03:04:05Z", datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)),
            ("2020-01-02T03:04:05.123Z", datetime(2020, 1, 2, 3, 4, 5, 123000, tzinfo=UTC)),
            ("2020-01-02T05:04:05+02:00", datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)),
            (None, None),
        ],
    )
    def test_registration_date(self, api, alice, value, expected):
        client = accepted(api, alice, auth_body(clientData={"registrationDate": value}))
        assert client.registration_date == expected

    @pytest.mark.parametrize("value", ["not a date", "2020-13-01T00:00:00Z", 1577836800, True])
    def test_registration_date_refused(self, api, alice, value):
        body = auth_body(clientData={"registrationDate": value})
        refused(api, alice, body, "clientData.registrationDate")

    def test_kyc_hash(self, api, alice):
        client = accepted(api, alice, auth_body(clientData={"kycHash": "sha256:abc"}))
        assert client.kyc_hash == "sha256:abc"
        assert accepted(api, alice, auth_body(clientData={"kycHash": None})).kyc_hash == ""

    @pytest.mark.parametrize("value", [123, True, ["a"], {"h": "a"}, "x" * 257])
    def test_kyc_hash_refused(self, api, alice, value):
        refused(api, alice, auth_body(clientData={"kycHash": value}), "clientData.kycHash")

    @pytest.mark.parametrize("value", ["text", 5, [], True])
    def test_client_data_must_be_an_object(self, api, alice, value):
        refused(api, alice, auth_body(clientData=value), "clientData")


class TestUnknownProperties:
    def test_top_level(self, api, alice):
        fields = refused(api, alice, auth_body(clientIp="1.2.3.4"), "clientIp")
        assert fields["clientIp"] == "Unknown field."

    def test_inside_client_data(self, api, alice):
        body = auth_body(clientData={"kycLevel": 1, "vipTier": 5})
        fields = refused(api, alice, body, "clientData.vipTier")
        assert fields["clientData.vipTier"] == "Unknown field."

    def test_case_matters(self, api, alice):
        body = auth_body(clientData={"KycLevel": 1})
        refused(api, alice, body, "clientData.KycLevel")
        body = {"clientplatformid": platform_id(1), "clientTradeUrl": trade_url(1)}
        refused(api, alice, body, "clientplatformid", "clientPlatformId")

    def test_unknown_and_invalid_are_reported_together(self, api, alice):
        body = auth_body(clientId="x" * 200, extra=1, clientData={"kycLevel": 9, "more": True})
        refused(api, alice, body, "clientId", "extra", "clientData.kycLevel", "clientData.more")
