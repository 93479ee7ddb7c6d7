"""GET /health and maintenance mode (decisions: Operations)."""

import time
from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from config import health
from core.selectors import maintenance_is_on, service_settings_get
from core.services import service_settings_update
from tests.factories import assert_error, assert_request_id, auth_body

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"


def broken(message: str = "down"):
    def check() -> None:
        raise ConnectionError(message)

    return check


class TestHealth:
    def test_all_checks_ok(self, api):
        response = api.get("/health")
        assert response.status_code == 200
        body = response.json()
        assert body["success"] is True
        data = body["data"]
        assert data["status"] == "ok"
        assert data["checks"] == {"database": "ok", "cache": "ok", "broker": "ok"}
        assert data["maintenance"] == {"mode": "off"}
        assert isinstance(data["uptime"], int)
        assert data["uptime"] >= 0
        moment = datetime.fromisoformat(data["timestamp"])
        assert abs(moment - timezone.now()) < timedelta(minutes=1)
        assert data["timestamp"].endswith("Z")
        assert_request_id(response)

    def test_uptime_counts_from_the_process_start(self, api, monkeypatch):
        monkeypatch.setattr(health, "_STARTED", time.monotonic() - 3600)

        assert api.get("/health").json()["data"]["uptime"] in (3600, 3601)

    def test_maintenance_mode_shows_while_health_still_answers(self, api):
        service_settings_update(maintenance=True)

        response = api.get("/health")

        assert response.status_code == 200
        assert response.json()["data"]["maintenance"] == {"mode": "maintenance"}

    def test_needs_no_authentication(self, api):
        response = api.get("/health", headers={"api-key": "tsk_nonsense"})
        assert response.status_code == 200

    def test_the_real_checks_are_registered(self):
        assert set(health.CHECKS) == {"database", "cache", "broker"}
        for check in health.CHECKS.values():
            check()  # each answers on this machine's PostgreSQL and Redis

    @pytest.mark.parametrize("failing", ["database", "cache", "broker"])
    def test_one_failing_check_is_503_with_the_checks(self, api, monkeypatch, failing):
        monkeypatch.setitem(health.CHECKS, failing, broken())
        response = api.get("/health")
        error = assert_error(response, 503, 1008, "SERVICE_UNAVAILABLE")
        expected = {"database": "ok", "cache": "ok", "broker": "ok", failing: "unavailable"}
        assert error["details"] == {"checks": expected}

    def test_every_failing_check_is_named(self, api, monkeypatch):
        monkeypatch.setitem(health.CHECKS, "cache", broken())
        monkeypatch.setitem(health.CHECKS, "broker", broken())
        error = assert_error(api.get("/health"), 503, 1008, "SERVICE_UNAVAILABLE")
        assert error["details"]["checks"] == {
            "database": "ok",
            "cache": "unavailable",
            "broker": "unavailable",
        }

    def test_failure_reason_stays_out_of_the_response(self, api, monkeypatch):
        monkeypatch.setitem(health.CHECKS, "broker", broken("password=hunter2"))
        response = api.get("/health")
        assert response.status_code == 503
        assert b"hunter2" not in response.content

    def test_failure_is_logged(self, api, monkeypatch, caplog):
        monkeypatch.setitem(health.CHECKS, "database", broken("no route to host"))
        with caplog.at_level("WARNING", logger="config.health"):
            api.get("/health")
        assert any(
            "database" in r.getMessage() and "no route" in r.getMessage() for r in caplog.records
        )

    def test_cache_check_notices_a_cache_that_keeps_nothing(self, monkeypatch):
        monkeypatch.setattr(health.cache, "get", lambda *args, **kwargs: None)
        with pytest.raises(RuntimeError):
            health._cache()


@pytest.fixture
def maintenance(django_capture_on_commit_callbacks):
    def switch(on: bool) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            service_settings_update(maintenance=on)

    return switch


class TestMaintenance:
    def test_off_by_default(self, api, alice):
        assert maintenance_is_on() is False
        response = api.post(AUTH, auth_body(), format="json", headers=alice.headers)
        assert response.status_code == 200

    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("post", AUTH),
            ("get", "/secure/prices"),
            ("get", "/client/inventory"),
            ("get", "/v1/ledger/transactions"),
            ("post", "/sandbox/clock/advance"),
            ("get", "/auth/whatever"),
        ],
    )
    def test_every_api_route_is_503_system_maintenance(self, api, alice, maintenance, method, path):
        maintenance(True)
        response = getattr(api, method)(path, headers=alice.headers)
        assert_error(response, 503, 1007, "SYSTEM_MAINTENANCE")
        assert response["Retry-After"] == "60"

    def test_health_and_docs_stay_up(self, api, admin_client, maintenance):
        maintenance(True)
        assert api.get("/health").status_code == 200
        assert api.get("/docs/").status_code == 200
        schema = APIClient(raise_request_exception=False).get("/openapi.json")
        assert schema.status_code == 200
        assert schema.json()["openapi"].startswith("3.")
        assert admin_client.get("/admin/").status_code == 200
        assert api.get("/no/such/path").status_code == 404  # not an API prefix: plain 404

    def test_switching_off_restores_service(self, api, alice, maintenance):
        maintenance(True)
        assert api.post(AUTH, auth_body(), format="json", headers=alice.headers).status_code == 503
        maintenance(False)
        assert api.post(AUTH, auth_body(), format="json", headers=alice.headers).status_code == 200

    def test_switch_is_read_through_the_shared_cache(self, maintenance, django_assert_num_queries):
        maintenance(True)
        assert service_settings_get().maintenance is True  # fills the cache
        with django_assert_num_queries(0):
            assert maintenance_is_on() is True

    def test_the_cached_switches_are_decoded_once_until_they_change(self):
        from django.core.cache.backends.redis import RedisSerializer

        from core.selectors import Switches, service_settings_received

        on = Switches(maintenance=True, clock_offset_seconds=0)
        first = service_settings_received(RedisSerializer().dumps(on))
        assert first == on
        # The same bytes read by the next request: not unpickled again.
        assert service_settings_received(RedisSerializer().dumps(on)) is first

        off = RedisSerializer().dumps(Switches(maintenance=False, clock_offset_seconds=0))
        assert service_settings_received(off).maintenance is False

    def test_nothing_is_written_under_maintenance(self, api, alice, maintenance):
        from merchants.models import ApiKey, Client

        maintenance(True)
        api.post(AUTH, auth_body(), format="json", headers=alice.headers)
        assert not Client.objects.exists()
        assert ApiKey.objects.get(prefix=alice.api_key[:16]).last_used_at is None
