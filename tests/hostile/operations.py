"""Every operation of the API, as the OpenAPI document describes it, plus any route of the URL
configuration the document leaves out (undocumented is not unreachable)."""

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver

API_PREFIXES = ("/auth/", "/secure/", "/client/", "/v1/", "/sandbox/")
METHODS = ("get", "post", "put", "patch", "delete")

# A path parameter's value when the attack is elsewhere: well formed, naming nothing.
PROBE_ID = "probe-000001"


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str  # a template: /secure/buy/{tradeId}/cancel
    path_params: dict[str, dict[str, Any]]
    query_params: dict[str, dict[str, Any]]
    body_schema: dict[str, Any] | None  # $refs resolved
    security: str | None  # "apiKey", "clientToken" or None
    documented: bool = True
    label: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", f"{self.method} {self.path}")

    def target(self, **overrides: str) -> str:
        """The request-target with every path parameter filled; ``overrides`` are raw
        (already percent-encoded) values for some of them."""
        filled = {name: _plausible_param(schema) for name, schema in self.path_params.items()}
        filled.update(overrides)
        return re.sub(r"\{(\w+)\}", lambda match: filled[match.group(1)], self.path)


def _plausible_param(schema: dict[str, Any]) -> str:
    if schema.get("enum"):
        return str(schema["enum"][0])
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    return PROBE_ID


class Resolver:
    def __init__(self, document: dict[str, Any]) -> None:
        self.schemas = document.get("components", {}).get("schemas", {})

    def __call__(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema with its ``$ref`` and single-entry ``allOf`` followed, keeping the rest."""
        while True:
            if "$ref" in schema:
                schema = {**self.schemas[schema["$ref"].rsplit("/", 1)[1]], **_without(schema)}
            elif len(schema.get("allOf", ())) == 1:
                schema = {**schema["allOf"][0], **_without(schema, "allOf")}
            else:
                return schema


def _without(schema: dict[str, Any], key: str = "$ref") -> dict[str, Any]:
    return {name: value for name, value in schema.items() if name != key}


def documented_operations(document: dict[str, Any]) -> list[Operation]:
    resolve = Resolver(document)
    operations = []
    for path, item in document["paths"].items():
        if not path.startswith(API_PREFIXES):
            continue  # /health is the liveness probe of the test itself
        for method in METHODS:
            spec = item.get(method)
            if spec is None:
                continue
            params = spec.get("parameters", [])
            body = spec.get("requestBody", {}).get("content", {}).get("application/json")
            security = [name for requirement in spec.get("security", []) for name in requirement]
            operations.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    path_params={p["name"]: p["schema"] for p in params if p["in"] == "path"},
                    query_params={p["name"]: p["schema"] for p in params if p["in"] == "query"},
                    body_schema=resolve(body["schema"]) if body else None,
                    security=security[0] if security else None,
                )
            )
    return operations


def all_operations(document: dict[str, Any]) -> list[Operation]:
    """The documented operations, then those only the URL configuration knows."""
    operations = documented_operations(document)
    known = {operation.label for operation in operations}
    for path, view_class in _routes(get_resolver().url_patterns, "/"):
        if not path.startswith(API_PREFIXES):
            continue
        for method in METHODS:
            label = f"{method.upper()} {path}"
            if hasattr(view_class, method) and label not in known:
                operations.append(
                    Operation(
                        method=method.upper(),
                        path=path,
                        path_params={name: {} for name in re.findall(r"\{(\w+)\}", path)},
                        query_params={},
                        body_schema=None if method == "get" else {},
                        security="clientToken" if path.startswith("/client/") else "apiKey",
                        documented=False,
                    )
                )
    return operations


def _routes(patterns: list[Any], prefix: str) -> Iterator[tuple[str, type]]:
    """(path template, view class) of every class-based route, ``<str:x>`` written ``{x}``."""
    for pattern in patterns:
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + route)
        elif isinstance(pattern, URLPattern):
            view_class = getattr(pattern.callback, "cls", None) or getattr(
                pattern.callback, "view_class", None
            )
            if view_class is not None:
                yield prefix + route, view_class
