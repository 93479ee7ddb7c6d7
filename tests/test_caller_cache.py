"""The per-request path (docs/decisions.md, "Per-request path"): API keys, secrets and merchants
kept in each process between requests, no database read for them on a hit, one round trip to
Redis per request, and every change to a caller seen at the next request of every process (the
auth epoch), a bump lost to a Redis outage made up for, and a row edited by hand seen within the
limit on a kept row's age (driven here by a stand-in for ``merchants.callers.time``, never by
sleeping)."""

import os
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable

import jwt
import pytest
import redis
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from merchants import callers, ratelimits
from merchants.callers import CALLERS, CallerCache
from merchants.models import ApiKey, ApiSecret, Merchant, Scope
from merchants.ratelimits import auth_epoch_bump, auth_epoch_read
from merchants.services import api_key_revoke, api_secret_rotate, callers_changed
from tests.factories import Actor, add_api_key, assert_error, auth_body, make_actor
from tests.faults.database import database_url

AUTH = "/auth/authenticate-client"
CLOCK = "/sandbox/clock"
TOKEN_CHECK = "/client/trades"


@pytest.fixture(autouse=True)
def monotonic(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """The clock the kept rows age by, moved by hand (a slow first request on a busy machine
    must not age them)."""
    now = {"t": 1_000.0}
    monkeypatch.setattr(callers, "time", types.SimpleNamespace(monotonic=lambda: now["t"]))

    def advance(seconds: float) -> None:
        now["t"] += seconds

    return advance


def another_process_changes(change: Callable[[], None]) -> None:
    """What another process does when it changes a caller: the rows change and, once committed,
    the auth epoch moves; this process's own kept rows are not touched."""
    change()
    auth_epoch_bump()


def clock(api: APIClient, actor: Actor):  # type: ignore[no-untyped-def]
    return api.get(CLOCK, headers=actor.headers)


def token_of(api: APIClient, actor: Actor) -> str:
    response = api.post(AUTH, auth_body(), format="json", headers=actor.headers)
    assert response.status_code == 200, response.content
    return str(response.json()["data"]["token"])


def client_call(api: APIClient, token: str):  # type: ignore[no-untyped-def]
    return api.get(TOKEN_CHECK, headers={"Authorization": f"Bearer {token}"})


pytestmark = pytest.mark.django_db


class TestHit:
    def test_a_kept_key_costs_no_database_read(self, api, alice):
        assert clock(api, alice).status_code == 200  # reads the key, records its use
        with CaptureQueriesContext(connection) as queries:
            assert clock(api, alice).status_code == 200
        assert [q["sql"] for q in queries] == []

    def test_a_kept_merchant_of_a_client_token_costs_no_database_read(self, api, alice):
        token = token_of(api, alice)
        assert client_call(api, token).status_code == 200
        with CaptureQueriesContext(connection) as queries:
            assert client_call(api, token).status_code == 200
        assert not [q["sql"] for q in queries if "merchants_apisecret" in q["sql"]]

    def test_a_request_makes_one_round_trip_to_redis(self, api, alice, monkeypatch):
        assert clock(api, alice).status_code == 200
        commands: list[str] = []
        send = redis.Redis.execute_command

        def counted(self, *args, **options):  # type: ignore[no-untyped-def]
            commands.append(str(args[0]))
            return send(self, *args, **options)

        monkeypatch.setattr(redis.Redis, "execute_command", counted)
        response = clock(api, alice)
        assert response.status_code == 200
        assert commands == ["EVALSHA"]
        assert response["X-RateLimit-Remaining"] == str(int(response["X-RateLimit-Limit"]) - 2)

    def test_a_key_kept_too_long_is_read_again_but_counted_in_the_one_round_trip(
        self, api, alice, monkeypatch, monotonic
    ):
        assert clock(api, alice).status_code == 200
        monotonic(CallerCache.SECONDS + 0.5)
        commands: list[str] = []
        send = redis.Redis.execute_command

        def counted(self, *args, **options):  # type: ignore[no-untyped-def]
            commands.append(str(args[0]))
            return send(self, *args, **options)

        monkeypatch.setattr(redis.Redis, "execute_command", counted)
        with CaptureQueriesContext(connection) as queries:
            response = clock(api, alice)
        assert response.status_code == 200
        assert any("merchants_apikey" in q["sql"] for q in queries)  # the row is read again
        assert commands == ["EVALSHA"]
        assert response["X-RateLimit-Remaining"] == str(int(response["X-RateLimit-Limit"]) - 2)

    def test_a_wrong_guess_from_an_old_row_is_counted_once_in_the_right_window(
        self, api, alice, monotonic
    ):
        """The old kept row names the other verification state: the count the gate made in
        that window is taken back, and the request counted in the merchant's own."""
        was = alice.merchant.is_verified

        def flip_by_hand(verified: bool) -> None:
            Merchant.objects.filter(pk=alice.merchant.pk).update(is_verified=verified)
            monotonic(CallerCache.SECONDS + 0.5)

        def remaining() -> int:
            response = clock(api, alice)
            assert response.status_code == 200
            return int(response["X-RateLimit-Limit"]) - int(response["X-RateLimit-Remaining"])

        assert remaining() == 1
        flip_by_hand(not was)
        assert remaining() == 1  # counted once in the other window
        flip_by_hand(was)
        assert remaining() == 2  # the first request and this one; the guess's count taken back

    def test_outside_a_request_the_rows_are_read_afresh(self, api, alice):
        assert clock(api, alice).status_code == 200
        key = ApiKey.objects.get(prefix=alice.api_key[:16])
        from merchants.selectors import api_key_find

        with CaptureQueriesContext(connection) as queries:
            found = api_key_find(raw_key=alice.api_key)
        assert found == key
        assert len(queries) == 1


class TestChangesReachEveryProcess:
    def test_a_key_revoked_elsewhere_is_refused_at_the_next_request(self, api, alice):
        assert clock(api, alice).status_code == 200
        another_process_changes(
            lambda: ApiKey.objects.filter(prefix=alice.api_key[:16]).update(
                revoked_at="2026-01-01T00:00:00Z"
            )
        )
        assert_error(clock(api, alice), 401, 1901, "INVALID_API_KEY")

    def test_a_merchant_disabled_elsewhere_is_refused_at_the_next_request(self, api, alice):
        token = token_of(api, alice)
        assert client_call(api, token).status_code == 200
        another_process_changes(
            lambda: Merchant.objects.filter(pk=alice.merchant.pk).update(
                status=Merchant.Status.DISABLED
            )
        )
        assert_error(clock(api, alice), 403, 1301, "ACCOUNT_DISABLED")
        assert_error(client_call(api, token), 401, 1102, "INVALID_TOKEN")

    def test_a_secret_rotated_elsewhere_signs_the_next_token(self, api, alice):
        token_of(api, alice)  # keeps the merchant's secrets
        old = ApiSecret.objects.get(merchant=alice.merchant)
        new = ApiSecret(merchant=alice.merchant, secret="rotated-elsewhere-" + "x" * 40)

        def rotate() -> None:
            ApiSecret.objects.filter(pk=old.pk).update(expires_at="2999-01-01T00:00:00Z")
            new.save()

        another_process_changes(rotate)
        token = token_of(api, alice)
        assert jwt.decode(token, new.secret, algorithms=["HS256"])["merchantId"]
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(token, old.secret, algorithms=["HS256"])

    def test_secrets_stopped_elsewhere_refuse_the_clients_tokens(self, api, alice):
        token = token_of(api, alice)
        assert client_call(api, token).status_code == 200
        another_process_changes(
            lambda: ApiSecret.objects.filter(merchant=alice.merchant).update(
                expires_at="2000-01-01T00:00:00Z"
            )
        )
        assert_error(client_call(api, token), 401, 1102, "INVALID_TOKEN")

    def test_a_row_edited_by_hand_is_seen_within_the_age_limit(self, api, alice, monotonic):
        assert clock(api, alice).status_code == 200
        ApiKey.objects.filter(prefix=alice.api_key[:16]).update(revoked_at="2026-01-01T00:00Z")

        monotonic(CallerCache.SECONDS - 0.01)
        assert clock(api, alice).status_code == 200  # the kept row still serves
        monotonic(0.02)
        assert_error(clock(api, alice), 401, 1901, "INVALID_API_KEY")

    def test_a_bump_lost_to_an_outage_is_made_at_the_next_round_trip(
        self, api, alice, bob, monkeypatch, django_capture_on_commit_callbacks
    ):
        assert clock(api, alice).status_code == 200
        before = auth_epoch_read()

        def unreachable(self):  # type: ignore[no-untyped-def]
            raise redis.ConnectionError("Redis went away after the commit")

        with monkeypatch.context() as outage:
            outage.setattr(ratelimits.RedisWindowCounter, "epoch_bump", unreachable)
            with django_capture_on_commit_callbacks(execute=True):
                api_key_revoke(api_key=ApiKey.objects.get(prefix=alice.api_key[:16]))
        assert auth_epoch_read() == before  # nobody else was told
        assert CALLERS.bump_owed

        assert clock(api, bob).status_code == 200  # Redis is back: this round trip makes it up
        assert auth_epoch_read() != before
        assert not CALLERS.bump_owed
        assert_error(clock(api, alice), 401, 1901, "INVALID_API_KEY")

    def test_a_process_that_met_the_outage_keeps_nothing_from_before_it(
        self, api, alice, monkeypatch
    ):
        """Another process revoked the key while Redis was away, so the epoch did not move: this
        process, whose request met the outage, reads the key afresh once Redis is back."""
        assert clock(api, alice).status_code == 200
        ApiKey.objects.filter(prefix=alice.api_key[:16]).update(revoked_at="2026-01-01T00:00Z")

        def unreachable(self, **_):  # type: ignore[no-untyped-def]
            raise redis.ConnectionError("Redis is away")

        with monkeypatch.context() as outage:
            outage.setattr(ratelimits.RedisWindowCounter, "read", unreachable)
            assert_error(clock(api, alice), 503, 1008, "SERVICE_UNAVAILABLE")
        assert_error(clock(api, alice), 401, 1901, "INVALID_API_KEY")

    def test_this_process_sees_its_own_change_before_commit(self, api, alice):
        assert clock(api, alice).status_code == 200
        with transaction.atomic():
            ApiKey.objects.filter(prefix=alice.api_key[:16]).update(revoked_at="2026-01-01T00:00Z")
            callers_changed()
            assert_error(clock(api, alice), 401, 1901, "INVALID_API_KEY")

    def test_rotation_through_the_service_drops_the_kept_secrets(self, api, alice):
        token_of(api, alice)
        new = api_secret_rotate(merchant=alice.merchant)
        token = token_of(api, alice)
        assert jwt.decode(token, new.secret, algorithms=["HS256"])["merchantId"]


class TestRateLimitsUnchanged:
    def test_a_kept_key_refused_by_its_scope_is_not_counted(self, api, alice, monkeypatch):
        frozen = (int(1.8e9) // 3600) * 3600 + 1800.0
        monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: frozen))
        ledger_only = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,))
        for _ in range(3):  # the first read keeps the key; the others are counted, then not
            response = api.get(CLOCK, headers={"api-key": ledger_only})
            assert_error(response, 403, 1903, "API_KEY_SCOPE_DENIED")
        response = clock(api, alice)
        assert response["X-RateLimit-Remaining"] == str(int(response["X-RateLimit-Limit"]) - 1)

    def test_a_kept_key_under_maintenance_is_not_counted(
        self, api, alice, django_capture_on_commit_callbacks
    ):
        from core.services import service_settings_update

        assert clock(api, alice).status_code == 200
        with django_capture_on_commit_callbacks(execute=True):
            service_settings_update(maintenance=True)
        assert_error(clock(api, alice), 503, 1007, "SYSTEM_MAINTENANCE")
        with django_capture_on_commit_callbacks(execute=True):
            service_settings_update(maintenance=False)
        response = clock(api, alice)
        assert response["X-RateLimit-Remaining"] == str(int(response["X-RateLimit-Limit"]) - 2)


REVOKE_ELSEWHERE = textwrap.dedent(
    """
    import sys
    import django
    django.setup()
    from merchants.models import ApiKey
    from merchants.services import api_key_revoke
    api_key_revoke(api_key=ApiKey.objects.get(prefix=sys.argv[1]))
    print("revoked", flush=True)
    """
)


@pytest.mark.django_db(transaction=True)
def test_a_key_revoked_by_another_process_is_refused_here_at_once():
    api = APIClient()
    actor = make_actor(name="Elsewhere")
    assert clock(api, actor).status_code == 200
    assert CALLERS.get("key", actor.api_key[:16]) is not None  # kept here

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
    }
    done = subprocess.run(
        [sys.executable, "-c", REVOKE_ELSEWHERE, actor.api_key[:16]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "revoked", done.stderr

    assert CALLERS.get("key", actor.api_key[:16]) is not None  # nothing told this process...
    assert_error(clock(api, actor), 401, 1901, "INVALID_API_KEY")  # ...but the epoch moved
