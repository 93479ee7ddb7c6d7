"""The hostile requests every operation gets: what an attacker sends to find a crash.

Bodies are built as bytes from a plausible body (every property filled with a value of its
declared type) with one hostile JSON fragment put in place of one property, so each fragment is
seen by the parser and by the field it lands in, and invalid JSON and invalid UTF-8 can be sent
at all."""

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from tests.hostile.operations import Operation, Resolver

VALIDATION_FAILED = "VALIDATION_FAILED"
SENTINEL = "__hostile__"
SENTINEL_JSON = json.dumps(SENTINEL).encode()

DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000

# One value of each JSON type, for "a value of any other type than the declared one".
OF_TYPE = {
    "string": b'"probe"',
    "integer": b"7",
    "number": b"1.5",
    "boolean": b"true",
    "array": b"[]",
    "object": b"{}",
}
ACCEPTED_AS = {"number": {"number", "integer"}}
HUGE_NUMBERS = (b"1e400", b"-1e400", b"1" + b"0" * 400, b"1e999999999999999999999")
CONSTANTS = (b"NaN", b"Infinity", b"-Infinity")
UNSTORABLE_STRINGS = (b'"a\\u0000b"', b'"\\ud800"', b'"\\udfff\\ud800x"')
NOT_UTF8_STRING = b'"\xff\xfe\xed\xa0\x80"'
QUERY_NUMBERS = ("1e400", "-1e400", "1" + "0" * 400, "NaN", "Infinity", "-Infinity")

URL_OVER_APPLICATION_LIMIT = 5_000  # Django's limit is 4096 characters
URL_OVER_SERVER_LIMIT = 9_000  # gunicorn reads request lines of at most 8190 bytes
HEADER_OVER_SERVER_LIMIT = 20_000  # gunicorn reads header lines of at most 8190 bytes
TOO_MANY_HEADERS = 150  # gunicorn reads at most 100


@dataclass(frozen=True)
class Attack:
    name: str
    method: str
    target: str  # the raw request-target, percent-encoded
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()
    refused_as: str | None = None  # the key required when the request is authenticated
    before_authentication: bool = False  # refused with that key without credentials too


def attacks(operation: Operation, resolve: Resolver) -> Iterator[Attack]:
    yield from _request_attacks(operation)
    yield from _path_attacks(operation)
    yield from _query_attacks(operation)
    if operation.body_schema is not None:
        yield from _body_attacks(operation, resolve)


def _attack(operation: Operation, name: str, **fields: Any) -> Attack:
    fields.setdefault("target", operation.target())
    return Attack(name=name, method=operation.method, **fields)


def _refused_first(operation: Operation, name: str, **fields: Any) -> Attack:
    """Refused by the request checks that run before authentication and routing."""
    return _attack(
        operation, name, refused_as=VALIDATION_FAILED, before_authentication=True, **fields
    )


def _request_attacks(operation: Operation) -> Iterator[Attack]:
    target = operation.target()
    yield _refused_first(operation, "NUL in the path", target=target + "%00")
    # Django keeps bytes of the path that are not UTF-8 as %XX: text, naming nothing.
    yield _attack(operation, "invalid UTF-8 in the path", target=target + "%C3%28")
    yield _refused_first(operation, "NUL in a query name", target=target + "?pro%00be=1")
    long_query = "?probe=" + "a" * URL_OVER_APPLICATION_LIMIT
    yield _refused_first(operation, "URL over the application's limit", target=target + long_query)
    long_query = "?probe=" + "a" * URL_OVER_SERVER_LIMIT
    yield _refused_first(operation, "URL over the server's limit", target=target + long_query)
    big_headers = tuple((f"X-Probe-{n}", "a" * 6_000) for n in range(3))
    yield _refused_first(operation, "headers over the application's limit", headers=big_headers)
    big_header = (("X-Probe", "a" * HEADER_OVER_SERVER_LIMIT),)
    yield _refused_first(operation, "a header over the server's limit", headers=big_header)
    many = tuple((f"X-Probe-{n}", "a") for n in range(TOO_MANY_HEADERS))
    yield _refused_first(operation, "more headers than the server reads", headers=many)
    body = b'{"probe": "' + b"a" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE + b'"}'
    yield _refused_first(operation, "a body over DATA_UPLOAD_MAX_MEMORY_SIZE", body=body)


def _path_attacks(operation: Operation) -> Iterator[Attack]:
    for name in operation.path_params:
        target = operation.target(**{name: "a%00b"})
        yield _refused_first(operation, f"NUL in path parameter {name}", target=target)
        for label, value in (("invalid UTF-8", "%FF%FE"), ("an encoded surrogate", "%ED%A0%80")):
            target = operation.target(**{name: value})
            yield _attack(operation, f"{label} in path parameter {name}", target=target)


def _query_attacks(operation: Operation) -> Iterator[Attack]:
    target = operation.target()
    for name, schema in {**operation.query_params, "probe": {}}.items():
        for label, value in (("NUL", "a%00b"), ("invalid UTF-8", "%FF%FE")):
            query = f"?{name}={value}"
            yield _refused_first(operation, f"{label} in query {name}", target=target + query)
        for value in QUERY_NUMBERS:
            if _forbids(schema, value):
                yield _attack(
                    operation,
                    f"query {name}={value[:12]}",
                    target=f"{target}?{name}={value}",
                    refused_as=VALIDATION_FAILED,
                )


def _forbids(schema: dict[str, Any], value: str) -> bool:
    """Whether a query parameter's schema refuses a huge or not finite number: any number's
    does (bounds, or no NaN), a string's when its pattern does (a query integer is a string whose
    pattern holds its digits and bounds)."""
    if schema.get("type") in ("integer", "number"):
        return True
    pattern = schema.get("pattern")
    # JSON Schema's patterns are ECMA-262, whose $ ends the input.
    return pattern is not None and re.search(pattern.replace("$", r"\Z"), value) is None


def _body_attacks(operation: Operation, resolve: Resolver) -> Iterator[Attack]:
    def refused(name: str, body: bytes) -> Attack:
        return _attack(operation, name, body=body, refused_as=VALIDATION_FAILED)

    yield refused("an array nested 100,000 deep", DEEP_ARRAY)
    yield refused("an object nested 100,000 deep", DEEP_OBJECT)
    yield refused("a body that is not UTF-8", b'{"probe": ' + NOT_UTF8_STRING + b"}")
    for constant in (*CONSTANTS, *HUGE_NUMBERS):
        yield refused(f"a body that is {constant[:12].decode()}", constant)
    schema = resolve(operation.body_schema or {})
    base = plausible(schema, resolve)
    for path, node_schema in nodes(base, schema, resolve):
        where = ".".join(str(step) for step in path) or "body"
        if isinstance(_at(base, path), dict):
            for fragment in UNSTORABLE_STRINGS[:2]:
                body = _with_key(base, path, fragment)
                yield refused(f"property name {fragment.decode()} in {where}", body)
        if not path:
            continue
        declared = _types(node_schema)
        for kind, fragment in OF_TYPE.items():
            if declared and kind not in set().union(*(ACCEPTED_AS.get(t, {t}) for t in declared)):
                yield refused(f"{where} = {fragment.decode()}", _with_value(base, path, fragment))
        for fragment in (*HUGE_NUMBERS, *CONSTANTS, *UNSTORABLE_STRINGS, NOT_UTF8_STRING):
            shown = fragment[:14].decode(errors="backslashreplace")
            yield refused(f"{where} = {shown}", _with_value(base, path, fragment))


def plausible(schema: dict[str, Any], resolve: Resolver) -> Any:
    """A value of the declared type, every property present: not a valid request, but one
    that passes the type checks of most fields so that each hostile value is seen alone."""
    schema = resolve(schema)
    if schema.get("enum"):
        return next(value for value in schema["enum"] if value is not None)
    kinds = _types(schema)
    if "object" in kinds or "properties" in schema:
        return {
            name: plausible(prop, resolve) for name, prop in schema.get("properties", {}).items()
        }
    if "array" in kinds:
        return [plausible(schema.get("items", {}), resolve)]
    if "integer" in kinds or "number" in kinds:
        return max(1, schema.get("minimum", 1))
    if "boolean" in kinds:
        return True
    return {
        "uuid": str(uuid.uuid4()),
        "date-time": "2026-01-01T00:00:00Z",
        "date": "2026-01-01",
        "email": "probe@example.com",
        "uri": "https://example.com/probe",
    }.get(schema.get("format", ""), "probe-" + "a" * max(0, schema.get("minLength", 0) - 6))


def nodes(
    value: Any, schema: dict[str, Any], resolve: Resolver, path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(path, schema) of the body and of every value in it."""
    schema = resolve(schema)
    yield path, schema
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name, item in value.items():
            yield from nodes(item, properties.get(name, {}), resolve, (*path, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nodes(item, schema.get("items", {}), resolve, (*path, index))


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if kind is None:
        return {"object"} if "properties" in schema else set()
    return {kind} if isinstance(kind, str) else set(kind)


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _with_value(base: Any, path: tuple[Any, ...], fragment: bytes) -> bytes:
    copy = json.loads(json.dumps(base))
    _at(copy, path[:-1])[path[-1]] = SENTINEL
    return json.dumps(copy).encode().replace(SENTINEL_JSON, fragment)


def _with_key(base: Any, path: tuple[Any, ...], fragment: bytes) -> bytes:
    copy = json.loads(json.dumps(base))
    _at(copy, path)[SENTINEL] = 1
    return json.dumps(copy).encode().replace(SENTINEL_JSON, fragment)
