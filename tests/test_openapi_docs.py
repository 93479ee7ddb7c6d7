"""What the OpenAPI document tells an integrator about each operation: a summary, a description
that explains (not just who may call), the rate limit from the registry the views count with, the
errors with an example body each, and examples of the request and the answer that are valid
against the operation's own schemas and parse with the serializer the view parses with.

The document is generated without a drf-spectacular warning, and a view that declares no
documentation makes it warn, so a new endpoint cannot slip in undocumented.
"""

import json
import re
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.http import QueryDict
from django.urls import path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from jsonschema import Draft202012Validator, FormatChecker
from openapi_spec_validator import OpenAPIV31SpecValidator, validate
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import ValidationError

from core.api.schema import BODY_ERRORS, GENERIC_ERRORS
from core.api.serializers import parse
from core.api.views import ApiView
from core.errors import CATALOG
from merchants.views import CallerApiView, MerchantApiView
from tests.test_openapi import _routed_views

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """The document as ``/openapi.json`` serves it (generated and rendered once for the
    module; ``tests/test_openapi.py`` reads the served one)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema, renderer_context={}))


def operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for route, methods in document["paths"].items():
        for method, operation in methods.items():
            if method in METHODS:
                yield f"{method.upper()} {route}", operation


def _view(route: str) -> type:
    return _routed_views()[route.split(" ", 1)[1]]


# -- Generation.


def test_the_document_generates_and_validates_without_a_warning(tmp_path):
    GENERATOR_STATS.reset()
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "openapi.yaml")
    )
    assert not GENERATOR_STATS
    assert (tmp_path / "openapi.yaml").stat().st_size > 100_000


def test_the_document_is_valid_openapi_3_1(document):
    """As OpenAPI 3.1's own validator reads it: the structure (``webhooks`` included), every
    schema against the 3.1 dialect's meta-schema (JSON Schema 2020-12), each default valid
    against its schema."""
    assert document["openapi"] == "3.1.0"
    validate(document, cls=OpenAPIV31SpecValidator)


# Where a subschema sits in a schema (JSON Schema 2020-12's applicators).
SUBSCHEMA = (
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


def _subschemas(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict):
        return  # true or false
    yield where, schema
    for key in SUBSCHEMA:
        if key in schema:
            yield from _subschemas(schema[key], f"{where}/{key}")
    for key in SUBSCHEMA_LISTS:
        for index, member in enumerate(schema.get(key, [])):
            yield from _subschemas(member, f"{where}/{key}/{index}")
    for key in SUBSCHEMA_MAPS:
        for name, member in schema.get(key, {}).items():
            yield from _subschemas(member, f"{where}/{key}/{name}")


def _schemas_of(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema of the parameters, headers and media types below ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "schema":
                yield from _subschemas(value, f"{where}/schema")
            elif key not in ("example", "examples"):
                yield from _schemas_of(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _schemas_of(item, f"{where}/{index}")


def all_schemas(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, schema in document["components"]["schemas"].items():
        yield from _subschemas(schema, f"#/components/schemas/{name}")
    yield from _schemas_of(document["paths"], "#/paths")
    yield from _schemas_of(document["webhooks"], "#/webhooks")


def test_no_schema_keeps_a_form_of_openapi_3_0(document):
    """JSON Schema 2020-12 ignores ``nullable`` (a value said to be nullable would be described as
    never null), wants ``exclusiveMinimum`` as the bound itself (not a flag beside ``minimum``),
    and has ``examples`` (a list) where 3.0 had ``example``."""
    checked = 0
    for where, schema in all_schemas(document):
        assert "nullable" not in schema, where
        assert "example" not in schema, where
        for bound in ("exclusiveMinimum", "exclusiveMaximum"):
            assert not isinstance(schema.get(bound), bool), where
        checked += 1
    assert checked > 2000


@pytest.mark.parametrize(
    ("component", "key", "value", "wrong"),
    [
        ("DepositOut", "completedAt", "2025-01-31T12:00:00.000Z", 5),  # a type and null
        ("SandboxTransferOut", "deposit", None, "x"),  # a component or null
        ("PriceEntryOut", "withdraw", 1.5, "1.5"),  # one of several, or null
    ],
)
def test_a_key_that_may_be_null_admits_null_and_only_its_types(
    document, component, key, value, wrong
):
    schema = document["components"]["schemas"][component]["properties"][key]
    validator = Draft202012Validator({**schema, "components": document["components"]})

    assert validator.is_valid(None)
    assert validator.is_valid(value)
    assert not validator.is_valid(wrong)


class UndocumentedApi(MerchantApiView):
    def get(self, request: Request) -> Response:
        return Response({})


def test_a_view_without_documentation_makes_generation_warn():
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        generated = SchemaGenerator(patterns=[path("undocumented", UndocumentedApi.as_view())])
        generated.get_schema(request=None, public=True)
    warnings = " ".join(GENERATOR_STATS._warn_cache)
    GENERATOR_STATS.reset()
    assert "UndocumentedApi declares no OperationDoc" in warnings
    assert "no example of the answer" not in warnings  # nothing to say about a missing doc's parts


# -- Summaries and descriptions.


def _prose(description: str) -> str:
    """The description without the paragraphs the document adds to every operation."""
    return "\n\n".join(
        paragraph
        for paragraph in description.split("\n\n")
        if not paragraph.startswith(("**Authentication:**", "**Rate limit:**"))
    )


def test_every_operation_has_a_short_imperative_summary(document):
    summaries = {}
    for name, operation in operations(document):
        summary = operation.get("summary", "")
        assert 10 <= len(summary) <= 80, name
        assert not summary.endswith("."), name
        assert summary[0].isupper(), name
        summaries[summary] = name
    assert len(summaries) == len(list(operations(document))), "two operations share a summary"


def test_every_description_explains_the_operation_beyond_who_may_call(document):
    for name, operation in operations(document):
        description = operation["description"]
        prose = _prose(description)
        assert len(prose) >= 200, name
        assert description.count("**Authentication:**") == 1, name
        assert description.count("**Rate limit:**") == 1, name
        assert prose.count(".") >= 2, name  # sentences, not a label


def test_no_restructuredtext_and_no_accidental_code_blocks(document):
    text = json.dumps(document)
    assert "``" not in text
    assert not re.search(r":(class|func|meth|attr|mod|ref):`", text)
    for name, operation in operations(document):
        for line in operation["description"].splitlines():
            # Four spaces would make Markdown show the line as code.
            assert not line.startswith("    "), (name, line)


def test_no_docstring_reaches_the_document(document):
    # Docstrings speak to developers: a base view's, a serializer's (StrictSerializer's note
    # used to describe every request body), a handler's.
    text = json.dumps(document)
    for developer_note in (
        "Refuses properties it does not declare",
        "required_scope",
        "What a cancel may touch",
        "without an API key",
    ):
        assert developer_note not in text


# -- Rate limits.


def test_the_rate_limit_is_the_budget_of_the_view_that_counts(document):
    checked = 0
    for name, operation in operations(document):
        view = _view(name)
        line = next(
            p for p in operation["description"].split("\n\n") if p.startswith("**Rate limit:**")
        )
        if not issubclass(view, CallerApiView) or view.rate_limit is None:
            assert line == "**Rate limit:** none.", name
            assert "x-rateLimit" not in operation, name
            continue
        budget = view.rate_limit.rates
        assert operation["x-rateLimit"] == {
            "budget": view.rate_limit.bucket,
            "verified": {
                "limit": budget.verified.limit,
                "windowSeconds": budget.verified.window_seconds,
            },
            "unverified": {
                "limit": budget.unverified.limit,
                "windowSeconds": budget.unverified.window_seconds,
            },
        }, name
        assert f"{budget.verified.limit:,} requests per " in line, name
        assert f", {budget.unverified.limit:,} per " in line, name
        checked += 1
    assert checked >= 50


def test_the_rate_limit_reads_as_the_contract_writes_it(document):
    def line(route: str, method: str = "get") -> str:
        description = document["paths"][route][method]["description"]
        return next(p for p in description.split("\n\n") if p.startswith("**Rate limit:**"))

    assert line("/auth/authenticate-client", "post").startswith(
        "**Rate limit:** 1,000,000 requests per hour for a verified merchant, 100 per hour "
        "for an unverified one"
    )
    assert "100 requests per 5 minutes for a verified merchant, 10 per minute" in line(
        "/v1/ledger/transactions"
    )
    assert "5,000 requests per minute" in line("/secure/buy", "post")


def test_a_shared_budget_names_the_operations_that_share_it(document):
    def line(route: str, method: str) -> str:
        description = document["paths"][route][method]["description"]
        return next(p for p in description.split("\n\n") if p.startswith("**Rate limit:**"))

    withdraw = line("/client/trading/withdraw", "post")
    assert "`POST /client/trading/withdraw/quick`" in withdraw
    assert "`POST /client/trading/withdraw`" in line("/client/trading/withdraw/quick", "post")
    crypto = line("/secure/crypto/deposits", "get")
    assert "This budget (`crypto.read`) is also spent by 5 other operations." in crypto
    trades = line("/secure/trades", "get")
    assert trades.endswith(
        "This budget (`secure.trades`) is also spent by `GET /secure/trades/{tradeId}`."
    )
    assert "also spent" not in line("/secure/prices", "get")


# -- Errors.


def _error_keys(operation: dict[str, Any]) -> dict[str, str]:
    """Each documented error key with the status it is documented under."""
    keys = {}
    for status, response in operation["responses"].items():
        if int(status) >= 400:
            schema = response["content"]["application/json"]["schema"]
            for key in schema["properties"]["error"]["properties"]["key"]["enum"]:
                keys[key] = status
    return keys


def test_every_operation_that_can_refuse_documents_its_own_errors(document):
    for name, operation in operations(document):
        own = set(_error_keys(operation)) - set(GENERIC_ERRORS) - set(BODY_ERRORS)
        if name == "GET /health":
            assert own == set(), name  # it can only be unavailable
            continue
        assert own, name


def test_every_documented_error_has_an_example_body_of_its_own(document):
    for name, operation in operations(document):
        for key, status in _error_keys(operation).items():
            media = operation["responses"][status]["content"]["application/json"]
            example = media["examples"][key]["value"]
            assert example["success"] is False, (name, key)
            error = example["error"]
            assert (error["key"], error["code"]) == (key, CATALOG[key].code), (name, key)
            assert error["message"], (name, key)


def test_the_validation_example_is_what_the_operation_answers_a_bad_input(document):
    refused = document["paths"]["/client/trading/withdraw"]["post"]["responses"]["400"]
    error = refused["content"]["application/json"]["examples"]["VALIDATION_FAILED"]["value"]
    assert error["error"]["fields"] == {"items": "This field is required."}
    assert error["error"]["message"] == "Invalid fields: items"
    market_item = document["paths"]["/secure/market/item"]["get"]["responses"]["400"]
    error = market_item["content"]["application/json"]["examples"]["VALIDATION_FAILED"]["value"]
    # An empty query names no item: the rule between itemId and marketHashName refuses it.
    assert error["error"]["fields"] == {"itemId": "Give itemId or marketHashName."}


# -- Examples.


def _examples(operation: dict[str, Any]) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """(where, example, schema) of every example of an operation."""
    for parameter in operation.get("parameters", []):
        if "example" in parameter:
            yield f"parameter {parameter['name']}", parameter["example"], parameter["schema"]
    for media_type, media in operation.get("requestBody", {}).get("content", {}).items():
        if "example" in media:
            yield f"request {media_type}", media["example"], media["schema"]
    for status, response in operation["responses"].items():
        for media in response.get("content", {}).values():
            if "example" in media:
                yield f"response {status}", media["example"], media["schema"]
            for key, example in media.get("examples", {}).items():
                yield f"response {status} {key}", example["value"], media["schema"]


def test_every_request_body_and_success_answer_has_an_example(document):
    for name, operation in operations(document):
        for media in operation.get("requestBody", {}).get("content", {}).values():
            assert media.get("example") is not None, name
        successes = [s for s in operation["responses"] if s.startswith("2")]
        assert successes, name
        for status in successes:
            for media in operation["responses"][status]["content"].values():
                assert media.get("example", {}).get("data") is not None, (name, status)


def test_every_required_parameter_has_an_example(document):
    for name, operation in operations(document):
        for parameter in operation.get("parameters", []):
            if parameter.get("required"):
                assert "example" in parameter, (name, parameter["name"])


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_no_example_is_a_placeholder(document):
    for name, operation in operations(document):
        for where, example, _ in _examples(operation):
            for text in _strings(example):
                assert text.strip().lower() not in {"string", "uuid", "todo", "xxx"}, (
                    name,
                    where,
                )


# Keywords whose subschemas describe a part of the value, not all of it: never closed.
PARTIAL = ("allOf", "not", "if", "then", "else")


def _strict(schema: Any, closable: bool = True) -> Any:
    """A schema of the document (JSON Schema 2020-12, as OpenAPI 3.1 has it) with the objects
    that declare their properties closed, so an example cannot show a key the document does not
    describe."""
    if isinstance(schema, list):
        return [_strict(item, closable) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {
        key: _strict(value, closable and key not in PARTIAL) for key, value in schema.items()
    }
    if closable and "properties" in converted and "additionalProperties" not in converted:
        converted["additionalProperties"] = False
    return converted


FORMATS = FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    # As the service writes times: UTC, milliseconds, ``Z``.
    return not isinstance(value, str) or bool(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", value)
        and datetime.fromisoformat(value)
    )


@FORMATS.checks("uri")
def _uri(value: object) -> bool:
    return not isinstance(value, str) or bool(urlsplit(value).scheme and urlsplit(value).netloc)


def test_every_example_is_valid_against_its_own_schema(document):
    components = _strict(document["components"])
    checked = 0
    for name, operation in operations(document):
        for where, example, schema in _examples(operation):
            validator = Draft202012Validator(
                {**_strict(schema), "components": components}, format_checker=FORMATS
            )
            errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(example)]
            assert errors == [], (name, where, errors)
            checked += 1
    assert checked > 400


def test_the_strict_check_refuses_what_the_document_does_not_describe(document):
    """The check above can fail: an unknown key, a wrong type, a bad time are refused."""
    schema = document["paths"]["/v1/wallets/me/balance"]["get"]["responses"]["200"]
    media = schema["content"]["application/json"]
    validator = Draft202012Validator(
        {**_strict(media["schema"]), "components": _strict(document["components"])},
        format_checker=FORMATS,
    )
    good = media["example"]
    assert list(validator.iter_errors(good)) == []
    for bad in (
        {**good, "data": {**good["data"], "balanse": 1}},
        {**good, "data": {**good["data"], "balance": "4990.00"}},
        {**good, "requestId": 12345},
    ):
        assert list(validator.iter_errors(bad)), bad


def _as_parsed(example: Any) -> Any:
    """An example as the API's JSON parser hands it to a serializer (numbers as Decimal)."""
    return json.loads(json.dumps(example), parse_float=Decimal)


@pytest.mark.django_db
def test_request_examples_pass_the_serializer_the_view_parses_with(document):
    """Schema-valid is not enough: the cross-field rules (a trade URL of the platform id, one of
    itemId or marketHashName, ...) must hold too."""
    checked = 0
    for name, operation in operations(document):
        view = _view(name)
        if not issubclass(view, ApiView):
            continue
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if view.body_serializer is not None and body is not None:
            try:
                parse(view.body_serializer, _as_parsed(body["example"]))
            except ValidationError as exc:
                pytest.fail(f"{name} request example: {exc.detail}")
            checked += 1
        query = {
            p["name"]: p["example"]
            for p in operation.get("parameters", [])
            if p["in"] == "query" and "example" in p
        }
        if view.query_serializer is not None:
            given = QueryDict(mutable=True)
            for key, value in query.items():
                given[key] = json.dumps(value) if isinstance(value, bool) else str(value)
            try:
                parse(view.query_serializer, given)
            except ValidationError as exc:
                pytest.fail(f"{name} query example: {exc.detail}")
            checked += 1
    assert checked >= 39
