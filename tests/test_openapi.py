"""The OpenAPI description: what it declares, the docs page, and the API conforming to it.

The schemathesis run loads the live ``/openapi.json`` from the WSGI application and parametrizes
over every operation in it, so endpoints added later are tested without touching this file.
"""

import inspect
import json
import re
import time
import types
from collections.abc import Iterator

import pytest
import schemathesis
from django.contrib.staticfiles import finders
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from config.openapi import openapi_document
from config.wsgi import application
from merchants import ratelimits
from merchants.apis import AuthenticateClientApi
from merchants.models import Merchant, Scope
from merchants.ratelimits import rate_limit_hit
from merchants.services import ClientData, client_authenticate
from merchants.views import CallerApiView, ClientApiView, MerchantApiView
from sandbox.services.seeding import sandbox_seed
from tests.factories import make_actor, platform_id, trade_url
from wallet.apis import WalletBalanceApi

SWAGGER_ASSETS = (
    "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
    "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-standalone-preset.js",
    "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css",
)


@pytest.fixture
def openapi(api) -> dict:
    response = api.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def _error_codes(operation: dict, status: str) -> list[int]:
    schema = operation["responses"][status]["content"]["application/json"]["schema"]
    return schema["properties"]["error"]["properties"]["code"]["enum"]


def test_openapi_json_is_an_openapi_3_document_outside_the_envelope(api):
    response = api.get("/openapi.json")

    assert response.status_code == 200
    assert "json" in response["Content-Type"]
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert document["info"]["version"] == "0.8.3"
    assert "success" not in document
    assert "requestId" not in document
    assert "/auth/authenticate-client" in document["paths"]
    assert "/health" in document["paths"]


def test_security_schemes_of_the_contract_are_declared(openapi):
    schemes = openapi["components"]["securitySchemes"]

    assert schemes["apiKey"] == {"type": "apiKey", "in": "header", "name": "api-key"}
    assert schemes["clientToken"]["type"] == "http"
    assert schemes["clientToken"]["scheme"] == "bearer"
    assert schemes["merchantJwt"]["type"] == "http"
    assert schemes["merchantJwt"]["scheme"] == "bearer"


def test_authenticate_client_lists_its_errors(openapi):
    operation = openapi["paths"]["/auth/authenticate-client"]["post"]

    assert operation["security"] == [{"apiKey": []}]
    assert {"200", "400", "401", "403", "429"} <= set(operation["responses"])
    assert set(_error_codes(operation, "401")) == {1100, 1900, 1901}
    assert set(_error_codes(operation, "403")) == {1301, 1903, 1904}
    assert _error_codes(operation, "429") == [1005]
    assert {1001, 1915} <= set(_error_codes(operation, "400"))
    success = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert success["required"] == ["requestId", "success", "data"]


def test_sandbox_trade_events_list_the_bots_refusal(openapi):
    # Found by the trading property test: offer_created / offer_sent answer 424 code 31 when the
    # bots cannot make the step, and the operation did not list it.
    operation = openapi["paths"]["/sandbox/trades/{tradeId}/events"]["post"]

    assert _error_codes(operation, "424") == [31]
    assert _error_codes(operation, "409") == [1015, 3002]  # 1015: the Idempotency-Key
    assert set(_error_codes(operation, "404")) == {21, 2201}


def _routed_views() -> dict[str, type]:
    """Each routed view class by its path as the document writes it (``/secure/trades/{id}``)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns, prefix: str):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "view_class"):
                yield "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route), pattern.callback.view_class

    return dict(walk(get_resolver().url_patterns, ""))


def test_query_parameters_are_the_fields_of_the_serializer_that_parses_them(openapi):
    checked = 0
    for path, view in _routed_views().items():
        if getattr(view, "query_serializer", None) is None:
            continue
        fields = view.query_serializer().fields
        (operation,) = openapi["paths"][path].values()
        documented = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
        assert set(documented) == set(fields), path
        for name, field in fields.items():
            assert documented[name].get("required", False) == field.required, (path, name)
        checked += 1
    assert checked >= 15


def test_operations_are_not_described_by_their_base_views(openapi):
    # drf-spectacular describes an operation by the first docstring up its view's classes: every
    # merchant route said "``api-key`` header; ``required_scope`` names the scope the key must
    # carry." (MerchantApiView's note to developers), and a pair's base view would speak too.
    notes = {
        inspect.cleandoc(base.__doc__) for base in (CallerApiView, MerchantApiView, ClientApiView)
    }
    descriptions = {
        operation.get("description", "")
        for operations in openapi["paths"].values()
        for operation in operations.values()
    }

    assert notes & descriptions == set()
    # Nor by their own docstrings: the description is what the view declares for integrators.
    wallet = openapi["paths"]["/v1/wallets/me/balance"]["get"]["description"]
    assert wallet.startswith(WalletBalanceApi.doc.markdown)
    assert inspect.cleandoc(WalletBalanceApi.__doc__) not in wallet


def test_every_operation_documents_its_generic_errors(openapi):
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            name = f"{method.upper()} {path}"
            assert 1000 in _error_codes(operation, "500"), name
            assert 1001 in _error_codes(operation, "400"), name
            assert 1003 in _error_codes(operation, "405"), name
            assert {1007, 1008} <= set(_error_codes(operation, "503")), name
            if method in ("post", "put", "patch"):
                assert _error_codes(operation, "415") == [1004], name
            securities = {name for entry in operation.get("security", []) for name in entry}
            if "apiKey" in securities:
                assert {1100, 1900, 1901} <= set(_error_codes(operation, "401")), name
                assert {1301, 1904} <= set(_error_codes(operation, "403")), name
            if "clientToken" in securities:
                assert {1102, 1108} <= set(_error_codes(operation, "401")), name
            if "429" in responses:
                assert 1005 in _error_codes(operation, "429"), name


def _resolve(openapi: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _objects_of(openapi: dict, schema: dict) -> Iterator[dict]:
    """Every object schema of a request body, nested ones included."""
    schema = _resolve(openapi, schema)
    if schema.get("type") == "object":
        yield schema
        for prop in schema.get("properties", {}).values():
            yield from _objects_of(openapi, prop)
    for key in ("items",):
        if key in schema:
            yield from _objects_of(openapi, schema[key])
    for key in ("allOf", "oneOf", "anyOf"):
        for member in schema.get(key, []):
            yield from _objects_of(openapi, member)


def test_every_request_body_refuses_properties_it_does_not_declare(openapi):
    bodies = 0
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            for media in content.values():
                for obj in _objects_of(openapi, media["schema"]):
                    assert obj.get("additionalProperties") is False, (method, path, obj)
                bodies += 1
    assert bodies >= 20


def test_every_create_answers_200(openapi):
    """One status for every success: the document lists no 201 (a cashout used to answer it)."""
    posts = [op for ops in openapi["paths"].values() for m, op in ops.items() if m == "post"]
    assert len(posts) >= 20
    for operation in posts:
        successes = {status for status in operation["responses"] if status.startswith("2")}
        assert successes == {"200"}, operation["operationId"]


def test_request_ids_are_documented_as_the_server_gives_them(openapi):
    operation = openapi["paths"]["/health"]["get"]
    for response in operation["responses"].values():
        header = response["headers"]["X-Request-Id"]
        envelope_id = response["content"]["application/json"]["schema"]["properties"]["requestId"]
        assert header["schema"]["pattern"] == envelope_id["pattern"] == "^[A-Za-z0-9._-]{1,128}$"
        assert "format" not in envelope_id  # a client's own id is not a uuid


def _parameter(openapi: dict, path: str, name: str) -> dict:
    (operation,) = openapi["paths"][path].values()
    return next(p for p in operation["parameters"] if p["name"] == name)


@pytest.mark.parametrize(
    ("path", "name", "value", "keyword"),
    [
        ("/secure/prices", "game", "0", "pattern"),  # the bounds of a query integer
        ("/secure/trades", "limit", "0", "pattern"),
        ("/secure/trades", "limit", "20.0", "pattern"),  # 20.0 is the integer 20 in a body only
        ("/v1/ledger/transactions", "offset", "-1", "pattern"),
        ("/secure/trades", "cursor", "abc", "pattern"),
        ("/secure/crypto/deposits", "before", "2026-05-02 12:00:00Z", "format"),
        ("/secure/crypto/withdrawals", "before", "yesterday", "format"),
        ("/secure/market", "sort", "cheapest", "enum"),
    ],
)
def test_what_the_document_forbids_the_server_refuses(
    api, openapi, verified_api_key, path, name, value, keyword
):
    parameter = _parameter(openapi, path, name)
    query = {name: value, "platformId": platform_id(1)} if "crypto" in path else {name: value}

    response = api.get(path, query, headers={"api-key": verified_api_key})

    assert keyword in parameter["schema"]
    assert response.status_code == 400
    assert response.json()["error"]["fields"].keys() == {name}


def test_docs_serve_swagger_ui_from_the_sidecar(api):
    response = api.get("/docs/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "swagger-ui" in page
    assert "/openapi.json" in page
    for asset in SWAGGER_ASSETS:
        assert f"/static/{asset}" in page
        assert finders.find(asset) is not None, asset
    for cdn in ("cdn.jsdelivr", "unpkg.com", "cdnjs", "//cdn."):
        assert cdn not in page


# -- Schemathesis: every operation of the live description, with a verified merchant's key.
#
# Each operation gets a bounded, derandomized run (the same requests every time): the coverage
# phase's boundary values (each bound, one past it, each enum value, a wrong type, a missing
# required part) and MAX_EXAMPLES generated requests, valid and invalid by the document.

MAX_EXAMPLES = 25

# What a valid request may be answered with besides success: the contract's business refusals
# (400 with its own codes, e.g. PRICE_CHANGED; 403 ONCHAIN_MERCHANT_NOT_VERIFIED and FORBIDDEN;
# 404 unknown ids; 409 state conflicts; 424 the platform; 429 limits; 503 switched off). A 400
# must not be VALIDATION_FAILED (valid_data_is_never_validation_failed); 401 is not here: the
# requests carry good credentials.
VALID_DATA_STATUSES = ["2xx", "400", "403", "404", "409", "424", "429", "503"]

config = SchemathesisConfig.from_dict(
    {
        "generation": {
            "deterministic": True,
            # Unknown query parameters and headers are ignored by design (proxies add their own,
            # decisions "Strict bodies, lenient queries"); unknown body properties are refused
            # and the document says so (additionalProperties: false), so bodies are still fuzzed.
            "allow-extra-parameters": False,
        },
        "checks": {"positive_data_acceptance": {"expected-statuses": VALID_DATA_STATUSES}},
    }
)
# The document as /openapi.json serves it, built here rather than fetched: the fetch counts
# against the caller address's limit, which the quick start's suite keeps in its database, and
# collection may not touch the database.
schema = schemathesis.openapi.from_dict(
    json.loads(openapi_document().body),
    config=config,
    # The test events' helper posts to the URL it is given, and generated URLs name hosts on the
    # internet; tests/sandbox/test_webhook_test_events.py checks its answers against the document.
).exclude(path="/sandbox/webhooks/test")
schema.app = application
schema.location = "/openapi.json"

# No 5xx, and every response conforms to its operation's description: a documented status code,
# the documented content type, the documented body schema and headers.
CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def _refused_by_a_query_rule(case) -> bool:
    """The query breaks a rule between parameters of its view's query serializer: a refusal the
    contract names and the document cannot express (decisions section 7: the operation's
    description states it). Exactly those cases are exempt from the check below."""
    view = _routed_views().get(case.operation.path)
    serializer = getattr(view, "query_serializer", None)
    query = {name: value for name, value in (case.query or {}).items() if value not in (None, "")}
    return any(rule.error(query) for rule in getattr(serializer, "rules", ()))


@schemathesis.check
def valid_data_is_never_validation_failed(ctx, response, case) -> None:
    """A request the document allows is never refused as malformed: a client generated from the
    document cannot meet a validation error it could not foresee."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if _refused_by_a_query_rule(case):
        return
    if response.status_code == 400 and response.json()["error"]["key"] == "VALIDATION_FAILED":
        fields = response.json()["error"].get("fields")
        raise AssertionError(f"A request valid by the document was refused: {fields}")


# The document says what the server enforces, both ways: a valid request is accepted (or refused
# with a business code), an invalid one refused.
CONTRACT = [
    *CONFORMANCE,
    positive_data_acceptance,
    negative_data_rejection,
    valid_data_is_never_validation_failed,
    missing_required_header,
    ignored_auth,
    unsupported_method,
]


@pytest.fixture
def verified_api_key(db: None) -> str:
    return make_actor(name="Schemathesis", is_verified=True).api_key


@pytest.fixture
def caller_headers(db: None) -> dict[str, str]:
    """A verified merchant's key and one of its clients' tokens, over a small seeded world, so
    client routes and real listing, inventory and trade bodies are checked too."""
    sandbox_seed(items=60, listings=300)
    actor = make_actor(name="Schemathesis caller", is_verified=True)
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url="http://127.0.0.1:9/hooks")
    token = client_authenticate(
        merchant=actor.merchant,
        platform_id=platform_id(11),
        trade_url=trade_url(11),
        client_id="schemathesis",
        client_data=ClientData(),
    )
    return {"api-key": actor.api_key, "Authorization": f"Bearer {token}"}


@pytest.fixture
def wsgi_in_test_transaction(db: None) -> Iterator[None]:
    """Run the raw WSGI app inside the test's transaction, as Django's test client does.

    Django closes "obsolete" connections when a request starts and finishes; inside the test's
    atomic block that closes the test connection ("Cannot open a new connection in an atomic
    block"). Django's own test client disconnects the same receiver for the same reason.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
def test_api_keeps_its_openapi_contract(case, caller_headers, wsgi_in_test_transaction):
    case.call_and_validate(headers=caller_headers, checks=CONTRACT)


# Generated bodies rarely pass the cross-field rules (the trade URL must belong to the platform
# id), so the success and the documented refusals of authenticate-client are also sent explicitly.


def _authenticate_case(headers: dict[str, str]):
    return schema["/auth/authenticate-client"]["POST"].Case(
        headers=headers,
        body={"clientPlatformId": platform_id(7), "clientTradeUrl": trade_url(7)},
        media_type="application/json",
    )


@pytest.mark.usefixtures("wsgi_in_test_transaction")
def test_authenticate_client_success_conforms(verified_api_key):
    response = _authenticate_case({"api-key": verified_api_key}).call_and_validate(
        checks=CONFORMANCE
    )

    assert response.status_code == 200
    assert response.json()["data"]["token"]


@pytest.mark.usefixtures("wsgi_in_test_transaction")
def test_authenticate_client_refusals_conform():
    disabled = make_actor(name="Disabled", status=Merchant.Status.DISABLED)
    no_scope = make_actor(name="Ledger only", scopes=(Scope.LEDGER_READ,))
    cases = {
        401: _authenticate_case({"api-key": "tsk_000000000000_unknown"}),
        403: _authenticate_case(disabled.headers),
    }
    for status, case in cases.items():
        response = case.call_and_validate(checks=CONFORMANCE)
        assert response.status_code == status
    response = _authenticate_case(no_scope.headers).call_and_validate(checks=CONFORMANCE)
    assert response.json()["error"]["code"] == 1903


@pytest.mark.usefixtures("wsgi_in_test_transaction")
def test_authenticate_client_rate_limited_response_conforms():
    actor = make_actor(name="Unverified", is_verified=False)
    case = _authenticate_case(actor.headers)
    budget = AuthenticateClientApi.rate_limit
    assert budget is not None
    limit = budget.rate(verified=False).limit
    frozen = (int(time.time()) // 3600) * 3600 + 1800.0  # mid-hour: no window roll-over
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: frozen))
        for _ in range(limit):
            rate_limit_hit(
                merchant_id=str(actor.merchant.pk),
                verified=False,
                limited=budget,
            )
        response = case.call_and_validate(checks=CONFORMANCE)

    assert response.status_code == 429
    assert response.json()["error"]["code"] == 1005
