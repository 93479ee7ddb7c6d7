"""Every response is the envelope of spec 2.1, whatever goes wrong, with a fresh requestId."""

import json
import logging
import uuid
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import OperationalError
from rest_framework.response import Response
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from core.api.rendering import DecimalJSONParser, EnvelopeRenderer
from core.context import RequestIdLogFilter
from core.json import dumps, iso_ms
from merchants.models import Client
from tests.factories import assert_error, assert_request_id, auth_body

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"
NO_ROUTE = "/auth/no-such-route"


class TestProtocolErrors:
    def test_unknown_route_is_404_not_found(self, api):
        error = assert_error(api.get("/no/such/path"), 404, 1002, "NOT_FOUND")
        assert error == {"code": 1002, "key": "NOT_FOUND", "message": "No such endpoint."}

    def test_unknown_route_under_an_api_prefix_is_404_too(self, api, alice):
        assert_error(api.post("/auth/nope", {}, format="json"), 404, 1002, "NOT_FOUND")
        assert_error(api.get("/secure/nope", headers=alice.headers), 404, 1002, "NOT_FOUND")

    def test_no_slash_appended(self, api, alice):
        response = api.post(f"{AUTH}/", auth_body(), format="json", headers=alice.headers)
        assert_error(response, 404, 1002, "NOT_FOUND")

    def test_wrong_method_is_405_with_allow(self, api, alice):
        response = api.get(AUTH, headers=alice.headers)
        assert_error(response, 405, 1003, "METHOD_NOT_ALLOWED")
        allowed = {m.strip() for m in response["Allow"].split(",")}
        assert "POST" in allowed
        assert "GET" not in allowed

    def test_health_refuses_post_with_405(self, api):
        response = api.post("/health", {}, format="json")
        assert_error(response, 405, 1003, "METHOD_NOT_ALLOWED")
        assert "GET" in response["Allow"]

    def test_non_json_content_type_is_415(self, api, alice):
        response = api.post(
            AUTH, "clientPlatformId=1", content_type="text/plain", headers=alice.headers
        )
        assert_error(response, 415, 1004, "UNSUPPORTED_MEDIA_TYPE")

    def test_multipart_body_is_415(self, api, alice):
        response = api.post(AUTH, auth_body(), headers=alice.headers)  # multipart by default
        assert_error(response, 415, 1004, "UNSUPPORTED_MEDIA_TYPE")
        assert Client.objects.count() == 0

    def test_form_urlencoded_body_is_415(self, api, alice):
        response = api.post(
            AUTH,
            "clientPlatformId=76561197960265729",
            content_type="application/x-www-form-urlencoded",
            headers=alice.headers,
        )
        assert_error(response, 415, 1004, "UNSUPPORTED_MEDIA_TYPE")

    def test_json_with_a_charset_is_json(self, api, alice):
        response = api.post(
            AUTH,
            json.dumps(auth_body()),
            content_type="application/json; charset=utf-8",
            headers=alice.headers,
        )
        assert response.status_code == 200

    def test_any_accept_header_still_gets_json(self, api, alice):
        response = api.post(
            AUTH, auth_body(), format="json", headers={**alice.headers, "Accept": "text/html"}
        )
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response.json()["success"] is True

    def test_malformed_json_is_validation_failed_on_body(self, api, alice):
        response = api.post(
            AUTH, '{"clientPlatformId": ', content_type="application/json", headers=alice.headers
        )
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert list(error["fields"]) == ["body"]
        assert error["fields"]["body"].startswith("Malformed JSON")

    def test_invalid_utf8_is_validation_failed_on_body(self, api, alice):
        response = api.post(
            AUTH, b'{"a": "\xff\xfe"}', content_type="application/json", headers=alice.headers
        )
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert list(error["fields"]) == ["body"]

    @pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
    def test_non_finite_numbers_are_malformed_json(self, api, alice, constant):
        body = json.dumps(auth_body())[:-1] + f', "clientData": {{"totalWager": {constant}}}}}'
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert list(error["fields"]) == ["body"]
        assert Client.objects.count() == 0

    @pytest.mark.parametrize("body", ["[1, 2]", '"text"', "42", "null", "true"])
    def test_non_object_json_body_is_validation_failed_on_body(self, api, alice, body):
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert list(error["fields"]) == ["body"]

    def test_body_over_the_upload_limit_is_refused(self, api, alice):
        body = json.dumps(auth_body(clientId="x" * 3_000_000))  # Django's default limit: 2.5 MB
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert error["fields"] == {"body": "The body is too large."}
        assert Client.objects.count() == 0

    def test_body_limit_is_the_django_setting(self, api, alice, settings):
        body = json.dumps(auth_body())
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body)
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        assert response.status_code == 200
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body) - 1
        response = api.post(AUTH, body, content_type="application/json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert error["fields"] == {"body": "The body is too large."}

    def test_empty_body_is_validation_failed(self, api, alice):
        response = api.post(AUTH, "", content_type="application/json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert set(error["fields"]) == {"clientPlatformId", "clientTradeUrl"}


class TestCrashes:
    def test_unhandled_exception_in_a_view_is_500_internal_error(self, api, alice, monkeypatch):
        def crash(**kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr("merchants.apis.client_authenticate", crash)
        response = api.post(AUTH, auth_body(), format="json", headers=alice.headers)
        error = assert_error(response, 500, 1000, "INTERNAL_ERROR")
        assert "boom" not in json.dumps(error)  # no internals leak to the caller

    def test_unhandled_exception_outside_drf_is_500_internal_error(self, alice, monkeypatch):
        def crash():
            raise RuntimeError("boom in middleware")

        monkeypatch.setattr("core.api.middleware.maintenance_is_on", crash)
        api = APIClient(raise_request_exception=False)
        # A path no view takes: the maintenance check runs outside DRF (merchant and client
        # views read the switch themselves, in their round trip to Redis).
        response = api.get(NO_ROUTE, headers=alice.headers)
        error = assert_error(response, 500, 1000, "INTERNAL_ERROR")
        assert "boom" not in json.dumps(error)

    def test_database_operational_error_is_503_service_unavailable(self, api, alice, monkeypatch):
        def lost(**kwargs):
            raise OperationalError("connection refused")

        monkeypatch.setattr("merchants.authentication.api_key_find", lost)
        response = api.post(AUTH, auth_body(), format="json", headers=alice.headers)
        assert_error(response, 503, 1008, "SERVICE_UNAVAILABLE")
        assert response["Retry-After"] == "5"

    def test_database_lost_before_the_view_is_503_too(self, alice, monkeypatch):
        def lost():
            raise OperationalError("connection refused")

        monkeypatch.setattr("core.api.middleware.maintenance_is_on", lost)
        api = APIClient(raise_request_exception=False)
        response = api.get(NO_ROUTE, headers=alice.headers)
        assert_error(response, 503, 1008, "SERVICE_UNAVAILABLE")
        assert response["Retry-After"] == "5"


class TestRequestId:
    def test_each_response_gets_a_fresh_uuid4(self, api):
        ids = {assert_request_id(api.get("/no/such/path")) for _ in range(3)}
        assert len(ids) == 3

    def test_success_envelope_carries_the_request_id(self, api, alice):
        response = api.post(AUTH, auth_body(), format="json", headers=alice.headers)
        assert response.status_code == 200
        body = response.json()
        assert set(body) == {"requestId", "success", "data"}
        assert body["success"] is True
        assert assert_request_id(response) == body["requestId"]

    @pytest.mark.parametrize("sent", ["a", "req_2025-01-31.42", "A" * 128, str(uuid.uuid4())])
    def test_a_client_sent_request_id_of_the_accepted_shape_is_used(self, api, alice, sent):
        answers = [
            api.get("/no/such/path", headers={"X-Request-Id": sent}),
            api.post(
                AUTH, auth_body(), format="json", headers={**alice.headers, "X-Request-Id": sent}
            ),
        ]

        for response in answers:
            assert response.json()["requestId"] == sent
            assert response["X-Request-Id"] == sent

    @pytest.mark.parametrize("sent", ["", "a b", "A" * 129, "id/1", "é", "a\tb"])
    def test_any_other_request_id_is_ignored_for_a_fresh_one(self, api, sent):
        response = api.get("/no/such/path", headers={"X-Request-Id": sent})

        assert assert_request_id(response) != sent

    def test_the_same_client_id_twice_is_echoed_twice(self, api, alice, bob):
        """The id is the client's: two merchants sending the same one each get it back."""
        for actor in (alice, bob):
            response = api.get(
                "/secure/trades", headers={**actor.headers, "X-Request-Id": "retry-7"}
            )
            assert response.status_code == 200
            assert response["X-Request-Id"] == "retry-7"

    def test_the_logging_config_stamps_every_line(self):
        root = logging.getLogger()
        assert any(
            isinstance(f, RequestIdLogFilter) for handler in root.handlers for f in handler.filters
        )
        assert "%(request_id)s" in settings.LOGGING["formatters"]["line"]["format"]

    def test_request_id_appears_in_log_lines(self, api, alice, monkeypatch):
        lines: list[str] = []

        class Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                lines.append(self.format(record))

        handler = Collect(level=logging.DEBUG)
        handler.addFilter(RequestIdLogFilter())
        handler.setFormatter(logging.Formatter(settings.LOGGING["formatters"]["line"]["format"]))
        logging.getLogger().addHandler(handler)

        def crash(**kwargs):
            raise RuntimeError("logged crash")

        monkeypatch.setattr("merchants.apis.client_authenticate", crash)
        try:
            response = api.post(AUTH, auth_body(), format="json", headers=alice.headers)
        finally:
            logging.getLogger().removeHandler(handler)
        request_id = assert_request_id(response)
        crash_lines = [line for line in lines if "unhandled error" in line]
        assert crash_lines
        assert all(f"requestId={request_id}" in line for line in crash_lines)
        assert any("logged crash" in line for line in lines)  # the traceback is in the log


class _DecimalView(APIView):
    def get(self, request):
        return Response(
            {
                "price": Decimal("12.50"),
                "tiny": Decimal("0.00000001"),
                "zero": Decimal("0.00000000"),
                "big": Decimal("12345678901234567890.10"),
                "list": [Decimal("1.10"), Decimal("-0.50")],
            }
        )


class TestNumbers:
    def test_decimals_are_printed_exactly(self):
        request = APIRequestFactory().get("/x")
        response = _DecimalView.as_view()(request)
        response.render()
        raw = response.content.decode()
        assert '"price":12.50' in raw
        assert '"tiny":0.00000001' in raw
        assert '"zero":0.00000000' in raw
        assert '"big":12345678901234567890.10' in raw
        assert '"list":[1.10,-0.50]' in raw
        # And it is still valid JSON whose numbers read back exactly.
        data = json.loads(raw, parse_float=Decimal)["data"]
        assert data["price"] == Decimal("12.50")
        assert str(data["price"]) == "12.50"

    def test_renderer_envelope_and_times(self):
        from datetime import UTC, datetime

        moment = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
        assert iso_ms(moment) == "2024-05-06T07:08:09.123Z"
        assert dumps({"at": moment, "n": Decimal("3.000")}) == (
            b'{"at":"2024-05-06T07:08:09.123Z","n":3.000}'
        )
        rendered = EnvelopeRenderer().render({"a": Decimal("1.0")})
        assert json.loads(rendered)["success"] is True
        assert b'"data":{"a":1.0}' in rendered

    @pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "sNaN"])
    def test_non_finite_decimals_are_never_printed(self, value):
        import orjson

        with pytest.raises(orjson.JSONEncodeError):
            dumps({"n": Decimal(value)})

    def test_request_numbers_are_parsed_to_decimal(self):
        import io

        parsed = DecimalJSONParser().parse(io.BytesIO(b'{"a": 1200.50, "b": 0.1, "c": 7}'))
        assert parsed == {"a": Decimal("1200.50"), "b": Decimal("0.1"), "c": 7}
        assert str(parsed["a"]) == "1200.50"
        assert isinstance(parsed["c"], int)

    def test_api_keeps_money_exact_end_to_end(self, api, alice):
        body = auth_body(clientData={"totalWager": Decimal("0.3")})
        response = api.post(AUTH, body, format="json", headers=alice.headers)
        assert response.status_code == 200
        client = Client.objects.get(merchant=alice.merchant)
        assert client.total_wager == Decimal("0.30")  # not 0.29999999999999998...


def test_the_system_checks_pass_with_the_admin_middleware_outside_the_api():
    """The admin's middleware is mixed into subclasses that skip API paths; the admin's own
    checks (admin.E408-E410) still find it."""
    from django.core.management import call_command

    call_command("check", fail_level="ERROR")
