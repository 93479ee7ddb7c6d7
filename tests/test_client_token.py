"""Client tokens: what /auth/authenticate-client issues and ClientTokenAuthentication takes."""

import base64
import hashlib
import hmac
import json
import uuid
from datetime import timedelta
from decimal import Decimal

import jwt
import pytest
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory

from core import clock
from merchants.authentication import ClientCaller, ClientTokenAuthentication
from merchants.models import ApiSecret, Client, Merchant
from merchants.selectors import api_secret_for_signing
from merchants.services import api_secret_rotate, api_secrets_revoke
from merchants.tokens import client_token_decode
from merchants.views import ClientApiView
from tests.factories import auth_body, platform_id, trade_url

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"
DAY = 24 * 3600


def issue(api, actor, partner: int = 1, **fields) -> str:
    response = api.post(AUTH, auth_body(partner, **fields), format="json", headers=actor.headers)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert set(data) == {"token"}
    return data["token"]


def secret_of(merchant: Merchant) -> str:
    secret = api_secret_for_signing(merchant=merchant)
    assert secret is not None
    return secret.secret


def b64(part: bytes) -> str:
    return base64.urlsafe_b64encode(part).rstrip(b"=").decode()


def craft(header: dict, payload: dict, key: bytes | None = None) -> str:
    """A JWT assembled by hand: any header, HMAC-SHA256 over it with ``key`` (or no signature)."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    signature = hmac.new(key, signing_input.encode(), hashlib.sha256).digest() if key else b""
    return f"{signing_input}.{b64(signature)}"


_DROP = object()


def claims_for(merchant: Merchant, *, iat: int | None = None, **overrides) -> dict:
    now = int(clock.real_now().timestamp()) if iat is None else iat
    claims = {
        "merchantId": str(merchant.pk),
        "client": {
            "platformID": platform_id(1),
            "tradeUrl": trade_url(1),
            "clientId": None,
            "clientData": {},
        },
        "iat": now,
        "exp": now + DAY,
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not _DROP}


def sign(merchant: Merchant, claims: dict, *, secret: str | None = None, **options) -> str:
    headers = {"userId": str(merchant.pk), **options.pop("headers", {})}
    algorithm = options.pop("algorithm", "HS256")
    return jwt.encode(claims, secret or secret_of(merchant), algorithm=algorithm, headers=headers)


class _WhoAmI(ClientApiView):
    def get(self, request):
        caller = self.caller(request)
        return Response(
            {
                "merchantId": str(caller.merchant.pk),
                "platformId": caller.platform_id,
                "tradeUrl": caller.trade_url,
                "clientId": caller.client_id,
                "clientData": caller.client_data,
            }
        )


def call(authorization: str | None):
    extra = {"HTTP_AUTHORIZATION": authorization} if authorization is not None else {}
    request = APIRequestFactory().get("/client/whoami", **extra)
    response = _WhoAmI.as_view()(request)
    response.render()
    return response


def assert_invalid(authorization: str | None, key: str = "INVALID_TOKEN", code: int = 1102):
    response = call(authorization)
    assert response.status_code == 401, response.content
    assert response.data["code"] == code
    assert response.data["key"] == key
    return response


class TestIssuedToken:
    def test_header_and_claims(self, api, alice):
        before = int(clock.real_now().timestamp())
        token = issue(api, alice, 7, clientId="user-7", clientData={"kycLevel": 2})
        after = int(clock.real_now().timestamp())
        merchant_id = str(alice.merchant.pk)

        header = jwt.get_unverified_header(token)
        assert header["alg"] == "HS256"
        assert header["userId"] == merchant_id

        claims = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        assert set(claims) == {"merchantId", "client", "iat", "exp"}
        assert claims["merchantId"] == merchant_id
        assert claims["client"] == {
            "platformID": platform_id(7),
            "tradeUrl": trade_url(7),
            "clientId": "user-7",
            "clientData": {
                "totalWager": 0,
                "kycLevel": 2,
                "fiatDeposits": False,
                "cryptoDeposits": False,
                "registrationDate": None,
                "kycHash": None,
            },
        }
        assert before <= claims["iat"] <= after
        assert claims["exp"] == claims["iat"] + 86400

    def test_client_data_defaults(self, api, alice):
        token = issue(api, alice)
        claims = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        assert claims["client"]["clientId"] is None
        assert claims["client"]["clientData"] == {
            "totalWager": 0,
            "kycLevel": 0,
            "fiatDeposits": False,
            "cryptoDeposits": False,
            "registrationDate": None,
            "kycHash": None,
        }
        row = Client.objects.get(merchant=alice.merchant, platform_id=platform_id(1))
        assert row.total_wager == Decimal("0.00")
        assert row.kyc_level == 0
        assert row.fiat_deposits is False
        assert row.crypto_deposits is False
        assert row.registration_date is None
        assert row.kyc_hash == ""
        assert row.client_id == ""

    def test_full_client_data_is_carried_and_stored(self, api, alice):
        data = {
            "totalWager": Decimal("1200.50"),
            "kycLevel": 3,
            "fiatDeposits": True,
            "cryptoDeposits": True,
            "registrationDate": "2020-01-02T03:04:05Z",
            "kycHash": "abc123",
        }
        token = issue(api, alice, clientData=data)
        client_data = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])["client"][
            "clientData"
        ]
        assert client_data["totalWager"] == 1200.5
        assert client_data["kycLevel"] == 3
        assert client_data["fiatDeposits"] is True
        assert client_data["cryptoDeposits"] is True
        assert client_data["registrationDate"] == "2020-01-02T03:04:05.000Z"  # the API's format
        assert client_data["kycHash"] == "abc123"
        row = Client.objects.get(merchant=alice.merchant)
        assert row.total_wager == Decimal("1200.50")
        assert row.kyc_level == 3
        assert row.fiat_deposits is True
        assert row.crypto_deposits is True
        assert row.registration_date.isoformat().startswith("2020-01-02T03:04:05")
        assert row.kyc_hash == "abc123"

    def test_second_call_replaces_the_client_data(self, api, alice):
        issue(
            api,
            alice,
            clientId="first",
            clientData={
                "totalWager": 50,
                "kycLevel": 3,
                "fiatDeposits": True,
                "cryptoDeposits": True,
                "registrationDate": "2020-01-02T03:04:05Z",
                "kycHash": "h1",
            },
        )
        first = Client.objects.get(merchant=alice.merchant)
        token = issue(api, alice, clientData={"kycLevel": 1})
        assert Client.objects.filter(merchant=alice.merchant).count() == 1
        row = Client.objects.get(merchant=alice.merchant)
        assert row.pk == first.pk
        assert row.kyc_level == 1
        assert row.total_wager == Decimal("0.00")
        assert row.fiat_deposits is False
        assert row.crypto_deposits is False
        assert row.registration_date is None
        assert row.kyc_hash == ""
        assert row.client_id == ""
        assert row.updated_at >= first.updated_at
        claims = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        assert claims["client"]["clientData"]["kycLevel"] == 1
        assert claims["client"]["clientData"]["kycHash"] is None

    def test_each_merchant_keeps_its_own_client_row(self, api, alice, bob):
        issue(api, alice, clientData={"kycLevel": 3})
        issue(api, bob, clientData={"kycLevel": 1})
        assert Client.objects.count() == 2
        assert Client.objects.get(merchant=alice.merchant).kyc_level == 3
        assert Client.objects.get(merchant=bob.merchant).kyc_level == 1

    def test_a_token_verifies_only_with_its_merchants_secret(self, api, alice, bob):
        token = issue(api, alice)
        jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(token, secret_of(bob.merchant), algorithms=["HS256"])

    def test_iat_is_real_time_whatever_the_sandbox_clock_says(self, api, alice, clock_advance):
        clock_advance(5 * 3600)
        token = issue(api, alice)
        claims = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        assert abs(claims["iat"] - int(clock.real_now().timestamp())) <= 2
        assert claims["exp"] == claims["iat"] + 86400
        assert call(f"Bearer {token}").status_code == 200


class TestVerification:
    def test_valid_with_bearer_prefix(self, api, alice):
        token = issue(api, alice, 9, clientId="c-9", clientData={"kycLevel": 2})
        response = call(f"Bearer {token}")
        assert response.status_code == 200
        assert response.data["merchantId"] == str(alice.merchant.pk)
        assert response.data["platformId"] == platform_id(9)
        assert response.data["tradeUrl"] == trade_url(9)
        assert response.data["clientId"] == "c-9"
        assert response.data["clientData"]["kycLevel"] == 2

    def test_valid_bare(self, api, alice):
        token = issue(api, alice)
        assert call(token).status_code == 200

    @pytest.mark.parametrize("prefix", ["bearer ", "BEARER ", "Bearer  "])
    def test_bearer_scheme_is_case_insensitive(self, api, alice, prefix):
        token = issue(api, alice)
        assert call(prefix + token).status_code == 200

    def test_authenticator_returns_the_caller(self, api, alice):
        token = issue(api, alice, 3)
        request = APIRequestFactory().get("/x", HTTP_AUTHORIZATION=token)
        from rest_framework.request import Request

        caller, claims = ClientTokenAuthentication().authenticate(Request(request))
        assert isinstance(caller, ClientCaller)
        assert caller.merchant == alice.merchant
        assert caller.platform_id == platform_id(3)
        assert claims["merchantId"] == str(alice.merchant.pk)

    def test_missing_header_is_1108(self, alice):
        assert_invalid(None, "MISSING_BEARER", 1108)

    @pytest.mark.parametrize("value", ["", "   "])
    def test_empty_header_is_1108(self, alice, value):
        assert_invalid(value, "MISSING_BEARER", 1108)

    def test_bearer_with_nothing_after_is_1102(self, alice):
        assert_invalid("Bearer ")
        assert_invalid("Bearer")

    def test_api_key_in_authorization_is_1102(self, alice):
        assert_invalid(alice.api_key)

    def test_header_without_merchant_id_claim_uses_user_id(self, alice):
        token = sign(alice.merchant, claims_for(alice.merchant, merchantId=_DROP))
        assert call(f"Bearer {token}").status_code == 200

    def test_claim_without_user_id_header_uses_merchant_id(self, alice):
        claims = claims_for(alice.merchant)
        token = jwt.encode(claims, secret_of(alice.merchant), algorithm="HS256")
        assert "userId" not in jwt.get_unverified_header(token)
        assert call(token).status_code == 200

    def test_iat_slightly_ahead_is_tolerated(self, alice):
        now = int(clock.real_now().timestamp())
        token = sign(alice.merchant, claims_for(alice.merchant, iat=now + 30))
        assert call(token).status_code == 200


class TestRejectedTokens:
    """Each of these is 1102 INVALID_TOKEN, never a 500 and never a pass."""

    def test_alg_none(self, alice):
        claims = claims_for(alice.merchant)
        token = craft({"alg": "none", "typ": "JWT", "userId": str(alice.merchant.pk)}, claims)
        assert_invalid(f"Bearer {token}")

    def test_alg_none_spelled_differently(self, alice):
        claims = claims_for(alice.merchant)
        for alg in ("None", "NONE", "", None):
            token = craft({"alg": alg, "userId": str(alice.merchant.pk)}, claims)
            assert_invalid(token)

    def test_hs512_with_the_right_secret(self, alice):
        token = sign(alice.merchant, claims_for(alice.merchant), algorithm="HS512")
        assert jwt.get_unverified_header(token)["alg"] == "HS512"
        assert_invalid(f"Bearer {token}")

    def test_hs384_with_the_right_secret(self, alice):
        token = sign(alice.merchant, claims_for(alice.merchant), algorithm="HS384")
        assert_invalid(token)

    def test_rs256_using_the_secret_as_a_key(self, alice):
        header = {"alg": "RS256", "typ": "JWT", "userId": str(alice.merchant.pk)}
        token = craft(header, claims_for(alice.merchant), secret_of(alice.merchant).encode())
        assert_invalid(f"Bearer {token}")

    def test_hs256_header_lies_about_a_correct_signature_elsewhere(self, alice):
        # Signed as HS256 by hand with the right secret: the control for the crafted tokens.
        header = {"alg": "HS256", "typ": "JWT", "userId": str(alice.merchant.pk)}
        token = craft(header, claims_for(alice.merchant), secret_of(alice.merchant).encode())
        assert call(token).status_code == 200
        tampered = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
        assert_invalid(tampered)

    def test_signed_with_bobs_secret_naming_alice(self, alice, bob):
        token = sign(alice.merchant, claims_for(alice.merchant), secret=secret_of(bob.merchant))
        assert_invalid(f"Bearer {token}")

    def test_bobs_token_relabelled_as_alices(self, api, alice, bob):
        token = issue(api, bob)
        claims = jwt.decode(token, secret_of(bob.merchant), algorithms=["HS256"])
        claims["merchantId"] = str(alice.merchant.pk)
        header = {"alg": "HS256", "typ": "JWT", "userId": str(alice.merchant.pk)}
        forged = craft(header, claims, secret_of(bob.merchant).encode())
        assert_invalid(forged)

    def test_payload_changed_after_signing(self, api, alice):
        token = issue(api, alice)
        header_part, _, signature = token.split(".")
        claims = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        claims["client"]["clientData"]["kycLevel"] = 3
        forged_payload = b64(json.dumps(claims).encode())
        assert_invalid(f"{header_part}.{forged_payload}.{signature}")

    def test_expired(self, api, alice, time_passes):
        token = issue(api, alice)
        time_passes(DAY - 120)
        assert call(token).status_code == 200
        time_passes(121)
        assert_invalid(f"Bearer {token}")

    def test_expired_by_its_own_claims(self, alice):
        now = int(clock.real_now().timestamp())
        token = sign(alice.merchant, claims_for(alice.merchant, iat=now - DAY - 10))
        assert_invalid(token)

    def test_without_exp(self, alice):
        claims = claims_for(alice.merchant, exp=_DROP)
        assert "exp" not in claims
        assert "iat" in claims
        assert_invalid(sign(alice.merchant, claims))

    def test_without_iat(self, alice):
        claims = claims_for(alice.merchant)
        del claims["iat"]
        assert "exp" in claims
        assert_invalid(sign(alice.merchant, claims))

    @pytest.mark.parametrize("field", ["exp", "iat"])
    @pytest.mark.parametrize("value", ["soon", 1.5e12, True, None, [1]])
    def test_non_integer_times(self, alice, field, value):
        claims = claims_for(alice.merchant)
        claims[field] = value
        assert_invalid(sign(alice.merchant, claims))

    def test_issued_far_in_the_future(self, alice):
        now = int(clock.real_now().timestamp())
        assert_invalid(sign(alice.merchant, claims_for(alice.merchant, iat=now + 3600)))

    def test_header_user_id_differs_from_merchant_id(self, alice, bob):
        claims = claims_for(alice.merchant)
        token = sign(alice.merchant, claims, headers={"userId": str(bob.merchant.pk)})
        assert_invalid(token)

    def test_header_user_id_differs_even_when_signed_by_the_header_merchant(self, alice, bob):
        claims = claims_for(alice.merchant)
        token = sign(bob.merchant, claims, headers={"userId": str(bob.merchant.pk)})
        assert_invalid(token)

    def test_neither_merchant_id_nor_user_id(self, alice):
        claims = claims_for(alice.merchant, merchantId=_DROP)
        token = jwt.encode(claims, secret_of(alice.merchant), algorithm="HS256")
        assert_invalid(token)

    def test_merchant_disabled_after_issue(self, api, alice):
        token = issue(api, alice)
        assert call(token).status_code == 200
        Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
        assert_invalid(f"Bearer {token}")

    @pytest.mark.parametrize(
        "garbage",
        ["garbage", "a.b.c", "Bearer a.b", "....", "eyJhbGciOiJIUzI1NiJ9.e30.", "ü.ü.ü", "Basic x"],
    )
    def test_garbage(self, alice, garbage):
        assert_invalid(garbage)

    @pytest.mark.parametrize("merchant_id", ["not-a-uuid", "1", "", "' OR 1=1 --"])
    def test_merchant_id_not_a_uuid(self, alice, merchant_id):
        claims = claims_for(alice.merchant, merchantId=merchant_id)
        token = sign(alice.merchant, claims, headers={"userId": merchant_id})
        assert_invalid(token)

    def test_merchant_id_as_a_number(self, alice):
        token = jwt.encode(
            claims_for(alice.merchant, merchantId=12345), secret_of(alice.merchant), "HS256"
        )
        assert_invalid(token)

    def test_unknown_merchant(self, alice):
        stranger = str(uuid.uuid4())
        claims = claims_for(alice.merchant, merchantId=stranger)
        token = sign(alice.merchant, claims, headers={"userId": stranger})
        assert_invalid(token)

    def test_merchant_whose_secrets_were_all_revoked(self, api, alice):
        token = issue(api, alice)
        api_secrets_revoke(merchant=alice.merchant)
        assert_invalid(f"Bearer {token}")

    @pytest.mark.parametrize(
        "client",
        [_DROP, None, "x", {}, {"platformID": 76561197960265729}, {"tradeUrl": trade_url(1)}],
    )
    def test_missing_or_malformed_client_claim(self, alice, client):
        token = sign(alice.merchant, claims_for(alice.merchant, client=client))
        assert_invalid(token)


class TestRotation:
    def test_old_tokens_stay_valid_within_the_grace_new_ones_use_the_new_secret(
        self, api, alice, time_passes
    ):
        old_secret = secret_of(alice.merchant)
        old_token = issue(api, alice)
        new = api_secret_rotate(merchant=alice.merchant)
        assert new.secret != old_secret
        assert secret_of(alice.merchant) == new.secret

        new_token = issue(api, alice)
        jwt.decode(new_token, new.secret, algorithms=["HS256"])
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(new_token, old_secret, algorithms=["HS256"])

        assert call(old_token).status_code == 200
        assert call(new_token).status_code == 200
        time_passes(23 * 3600)
        assert call(old_token).status_code == 200

    def test_old_secret_stops_verifying_after_the_grace(self, api, alice, time_passes):
        old_token = issue(api, alice)
        api_secret_rotate(merchant=alice.merchant, grace=timedelta(hours=1))
        new_token = issue(api, alice)
        time_passes(3600 - 60)
        assert call(old_token).status_code == 200
        time_passes(120)
        assert_invalid(old_token)  # the token itself is still inside its 24 hours
        assert call(new_token).status_code == 200

    def test_default_grace_is_24_hours(self, alice):
        before = clock.real_now()
        old = api_secret_for_signing(merchant=alice.merchant)
        api_secret_rotate(merchant=alice.merchant)
        old.refresh_from_db()
        assert old.expires_at is not None
        after = clock.real_now()
        assert before + timedelta(hours=24) <= old.expires_at <= after + timedelta(hours=24)

    def test_rotating_twice_keeps_one_signing_secret(self, api, alice):
        token = issue(api, alice)
        api_secret_rotate(merchant=alice.merchant)
        latest = api_secret_rotate(merchant=alice.merchant)
        assert ApiSecret.objects.filter(merchant=alice.merchant, expires_at__isnull=True).get() == (
            latest
        )
        assert call(token).status_code == 200  # the first secret is still in its grace
        jwt.decode(issue(api, alice), latest.secret, algorithms=["HS256"])

    def test_rotation_of_alice_leaves_bob_alone(self, api, alice, bob):
        bob_secret = secret_of(bob.merchant)
        api_secret_rotate(merchant=alice.merchant)
        assert secret_of(bob.merchant) == bob_secret
        assert call(issue(api, bob)).status_code == 200

    def test_issuing_works_again_after_revoke_then_rotate(self, api, alice):
        old_token = issue(api, alice)
        api_secrets_revoke(merchant=alice.merchant)
        api_secret_rotate(merchant=alice.merchant)
        assert_invalid(old_token)
        assert call(issue(api, alice)).status_code == 200


class TestKeptParses:
    """Each process keeps what it read of a token (merchants.tokens): the same answers, once."""

    def test_a_token_is_parsed_once_for_all_its_calls(self, api, alice, monkeypatch):
        token = issue(api, alice)
        parses: list[str] = []
        decode_complete = jwt.decode_complete

        def counting(token: str, *args, **kwargs):
            parses.append(token)
            return decode_complete(token, *args, **kwargs)

        monkeypatch.setattr(jwt, "decode_complete", counting)
        for _ in range(3):
            assert call(token).status_code == 200
        assert parses == [token]  # the unverified parse; the signature is checked once too

    def test_a_kept_signature_is_refused_once_its_secret_is_revoked(self, api, alice):
        token = issue(api, alice)
        assert call(token).status_code == 200
        api_secrets_revoke(merchant=alice.merchant)
        assert_invalid(token)

    def test_each_call_gets_claims_of_its_own(self, api, alice):
        token = issue(api, alice)
        secrets = [secret_of(alice.merchant)]
        first = client_token_decode(token, secrets=secrets, now=clock.real_now())
        first["client"]["platformID"] = "changed"
        again = client_token_decode(token, secrets=secrets, now=clock.real_now())
        assert again["client"]["platformID"] == platform_id(1)


def clock_moved_by(api, actor, minutes: int) -> None:
    """``POST /sandbox/clock/advance``: one merchant moves the sandbox clock for every one."""
    response = api.post(
        "/sandbox/clock/advance", {"minutes": minutes}, format="json", headers=actor.headers
    )
    assert response.status_code == 200, response.content


def client_get(api, token: str) -> int:
    return api.get("/client/trades", headers={"Authorization": f"Bearer {token}"}).status_code


def works_for_real_seconds(api, token: str, seconds: int, real_clock_advance) -> None:
    """The token is taken until ``seconds`` of real time from now have passed, not after."""
    real_clock_advance(seconds - 60)
    assert client_get(api, token) == 200
    real_clock_advance(120)
    assert client_get(api, token) == 401


class TestAnotherMerchantsClock:
    """Issue 39: any merchant moves the sandbox clock for all. A token's 24 hours and a rotated
    secret's grace are real time: bob's advance neither ends alice's early nor extends them."""

    def test_an_advance_never_ends_a_token_early(self, api, alice, bob, real_clock_advance):
        token = issue(api, alice)

        clock_moved_by(api, bob, 1441)
        assert client_get(api, token) == 200

        works_for_real_seconds(api, token, DAY, real_clock_advance)

    def test_a_token_issued_after_an_advance_lives_24_real_hours(
        self, api, alice, bob, real_clock_advance
    ):
        clock_moved_by(api, bob, 1441)
        token = issue(api, alice)
        claims = jwt.decode(token, secret_of(alice.merchant), algorithms=["HS256"])
        assert abs(claims["iat"] - int(clock.real_now().timestamp())) <= 2
        assert claims["exp"] == claims["iat"] + DAY

        works_for_real_seconds(api, token, DAY, real_clock_advance)

    def test_an_advance_never_ends_a_rotated_secrets_grace_nor_extends_it(
        self, api, alice, bob, real_clock_advance
    ):
        before_rotation = issue(api, alice)
        api_secret_rotate(merchant=alice.merchant, grace=timedelta(hours=1))
        clock_moved_by(api, bob, 1441)
        assert client_get(api, before_rotation) == 200  # the old secret is in its grace

        # A token signed by the old secret now, itself good for 24 hours: the grace ends first.
        signed_by_old = sign(alice.merchant, claims_for(alice.merchant), secret=old_secret(alice))
        works_for_real_seconds(api, signed_by_old, 3600, real_clock_advance)
        assert client_get(api, issue(api, alice)) == 200


def old_secret(actor) -> str:
    return ApiSecret.objects.filter(merchant=actor.merchant, expires_at__isnull=False).get().secret
