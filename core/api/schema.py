"""OpenAPI generation: every body in its envelope, each response shape a named component, the
input a view parses, every error each endpoint can give with an example of each, and what the view
tells integrators (``ApiView.doc``: summary, description, examples; its rate limit)."""

import types
from collections import defaultdict
from collections.abc import Mapping
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from drf_spectacular.drainage import warn
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import (
    ComponentRegistry,
    ResolvedComponent,
    build_object_type,
    resolve_type_hint,
    safe_ref,
)
from rest_framework.exceptions import ValidationError
from typing_extensions import TypeAliasType

from core.api.digits import integer_text_pattern
from core.api.docs import IDEMPOTENCY_GUIDE, OperationDoc, rate_limit_markdown
from core.api.exceptions import as_domain_error
from core.api.idempotency import (
    HEADER,
    KEY_RULE,
    MAX_LENGTH,
    ORIGINAL_REQUEST_HEADER,
    REPLAYED_HEADER,
)
from core.api.middleware import NOT_TEXT
from core.api.serializers import (
    AboveZeroDecimalField,
    GameField,
    QueryIntegerField,
    StrictSerializer,
    UniqueListField,
    parse,
)
from core.api.views import ApiView
from core.errors import CATALOG, DomainError, ErrorSpec, validation_error
from core.shapes import Doc

# Every endpoint can answer these, whatever it does.
GENERIC_ERRORS = (
    "VALIDATION_FAILED",
    "METHOD_NOT_ALLOWED",
    "INTERNAL_ERROR",
    "SERVICE_UNAVAILABLE",
    "SYSTEM_MAINTENANCE",
)
BODY_ERRORS = ("UNSUPPORTED_MEDIA_TYPE",)

REQUEST_ID = {
    "type": "string",
    "pattern": "^[A-Za-z0-9._-]{1,128}$",
    "description": (
        "The request's id, also in the X-Request-Id response header and every log line: the "
        "X-Request-Id the client sent when it is 1-128 of A-Z a-z 0-9 . _ -, else a fresh uuid."
    ),
}
REQUEST_ID_HEADER = {
    "X-Request-Id": {
        "schema": REQUEST_ID,
        "required": True,
        "description": REQUEST_ID["description"],
    }
}
IDEMPOTENCY_ERRORS = ("IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED")
IDEMPOTENCY_KEY_PARAMETER = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_LENGTH, "pattern": "^[!-~]+$"},
    "example": "5f0c8a52-2a4e-4d8f-9a39-0b1c2d3e4f50",
    "description": " ".join(
        [
            f"Makes retrying this POST safe. The key: {KEY_RULE} A random UUID per operation.",
            "The first answer to a request sent with a key, success or error, is kept 24 hours",
            "and answered again to every retry with the same key and the same body, with",
            f"`{REPLAYED_HEADER}: true`; the operation runs once. The same key with another",
            "body or on another endpoint answers `IDEMPOTENCY_KEY_REUSED` (1016); while the",
            "first request still runs, `IDEMPOTENCY_KEY_IN_USE` (1015, with `Retry-After`).",
            "Not kept, so a retry runs again: `VALIDATION_FAILED` and answers with",
            "`Retry-After`. Keys are the merchant's own (a client token's account has keys of",
            f"its own). {IDEMPOTENCY_GUIDE.link()}.",
        ]
    ),
}
IDEMPOTENCY_HEADERS = {
    REPLAYED_HEADER: {
        "schema": {"type": "string", "enum": ["true"]},
        "description": f"Present on an answer replayed for a repeated `{HEADER}`.",
    },
    ORIGINAL_REQUEST_HEADER: {
        "schema": REQUEST_ID,
        "description": "On a replayed answer: the requestId of the request that got it first.",
    },
}
# A path segment: no NUL (refused before routing), and short enough for the URL limit.
PATH_SEGMENT = {"pattern": r"^[^\u0000]*$", "minLength": 1, "maxLength": 256}


def _error_schema(specs: list[ErrorSpec]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["requestId", "success", "error"],
        "properties": {
            "requestId": REQUEST_ID,
            "success": {"type": "boolean", "enum": [False]},
            "error": {
                "type": "object",
                "required": ["code", "key", "message"],
                "properties": {
                    "code": {"type": "integer", "enum": sorted({s.code for s in specs})},
                    "key": {"type": "string", "enum": [s.key for s in specs]},
                    "message": {
                        "oneOf": [
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}},
                        ]
                    },
                    "fields": {
                        "type": "object",
                        "maxProperties": 20,
                        "additionalProperties": {"type": "string"},
                    },
                    "details": {"type": "object"},
                },
            },
        },
    }


def _success_schema(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["requestId", "success", "data"],
        "properties": {
            "requestId": REQUEST_ID,
            "success": {"type": "boolean", "enum": [True]},
            "data": data,
        },
    }


def shape_schema(hint: Any, registry: ComponentRegistry) -> dict[str, Any]:
    """The schema of a response shape (``core.shapes``): each ``TypedDict`` and each named alias
    (``TypeAliasType``) in it becomes a component of its own name, referenced by ``$ref``.

    drf-spectacular resolves a ``TypedDict`` too, but inline, nested ones included; as a
    component a shape is described once and clients see its name."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return _documented(shape_schema(args[0], registry), args[1:])
    if is_typeddict(hint) or isinstance(hint, TypeAliasType):
        return _component(hint, registry)
    if origin is list:
        return {"type": "array", "items": shape_schema(args[0], registry)}
    if origin is dict and args and args[1] is not Any:
        return {"type": "object", "additionalProperties": shape_schema(args[1], registry)}
    if origin in (Union, types.UnionType):
        members = [shape_schema(arg, registry) for arg in args if arg is not type(None)]
        schema = members[0] if len(members) == 1 else {"oneOf": members}
        return or_null(schema) if type(None) in args else schema
    if hint is Any:
        return {}
    # str, int, bool, float, Decimal, datetime, Literal[...], dict[str, Any]: nothing inside them
    # that drf-spectacular would write in OpenAPI 3.0's forms (it writes an optional member of a
    # union it resolves as ``nullable`` even under 3.1), nor a shape it would inline.
    basic: dict[str, Any] = resolve_type_hint(hint)
    return basic


def or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema that also admits null, as JSON Schema 2020-12 writes it: ``null`` among a plain
    type's types, else one more alternative (a ``$ref``, an enum, a ``oneOf``, a schema of
    several types)."""
    if isinstance(schema.get("type"), str) and not {"$ref", "enum", "const"} & set(schema):
        return {**schema, "type": [schema["type"], "null"]}
    if list(schema) == ["oneOf"]:
        return {"oneOf": [*schema["oneOf"], {"type": "null"}]}
    return {"oneOf": [schema, {"type": "null"}]}


def _component(shape: Any, registry: ComponentRegistry) -> dict[str, Any]:
    component = ResolvedComponent(name=shape.__name__, type=ResolvedComponent.SCHEMA, object=shape)
    if component not in registry:
        if isinstance(shape, TypeAliasType):
            component.schema = shape_schema(shape.__value__, registry)
        else:
            keys = get_type_hints(shape, include_extras=True)
            component.schema = build_object_type(
                properties={
                    key: shape_schema(_key_type(hint), registry) for key, hint in keys.items()
                },
                required=shape.__required_keys__,
            )
        registry.register_on_missing(component)
    ref: dict[str, Any] = component.ref
    return ref


def _key_type(hint: Any) -> Any:
    """A key's type without ``NotRequired``/``Required`` (the shape's required keys say it)."""
    return get_args(hint)[0] if get_origin(hint) in (NotRequired, Required) else hint


def _documented(schema: dict[str, Any], metadata: tuple[Any, ...]) -> dict[str, Any]:
    for doc in metadata:
        if not isinstance(doc, Doc):
            continue
        facts = {
            "format": doc.format or None,
            "minimum": doc.minimum,
            "maximum": doc.maximum,
            "description": doc.description or None,
        }
        schema = {**schema, **{name: fact for name, fact in facts.items() if fact is not None}}
    return safe_ref(schema)


def is_shape(response: Any) -> bool:
    """A response given as a type (a shape, ``list[...]`` of one, a union) rather than a
    serializer or a schema."""
    return (
        is_typeddict(response)
        or isinstance(response, TypeAliasType)
        or get_origin(response) is not None
    )


# The requestId of every example envelope (each answer has its own uuid4).
EXAMPLE_REQUEST_ID = "4f6b2c1e-8d3a-4b7e-9c51-0a2d6e8f1b37"

# What ``details`` holds in the errors that carry the same wherever they come from; what differs
# by operation is its ``OperationDoc.error_details``.
DETAILS_EXAMPLES: dict[str, dict[str, Any]] = {
    "USER_NOT_TRADEABLE": {"antiCheatBanned": True, "gameBans": 1, "economyBan": "none"},
    "ONCHAIN_WITHDRAW_BELOW_MIN": {"feeCents": 500, "minReceiveCents": 1000},
}


def _success_example(data: Any) -> dict[str, Any]:
    return {"requestId": EXAMPLE_REQUEST_ID, "success": True, "data": data}


def _error_examples(
    specs: list[ErrorSpec], refused_input: DomainError, details: Mapping[str, Any]
) -> dict[str, Any]:
    """One example body per error: the catalog's code, key and message; the fields a refused
    input of this very operation gives; the details the services attach."""
    examples: dict[str, Any] = {}
    for spec in specs:
        error: dict[str, Any] = {"code": spec.code, "key": spec.key, "message": spec.message}
        if spec.key == "VALIDATION_FAILED":
            error |= {"message": refused_input.message, "fields": refused_input.fields}
        if spec.key in details or spec.key in DETAILS_EXAMPLES:
            error["details"] = details.get(spec.key, DETAILS_EXAMPLES.get(spec.key))
        examples[spec.key] = {
            "summary": f"{spec.code} {spec.key}",
            "value": {"requestId": EXAMPLE_REQUEST_ID, "success": False, "error": error},
        }
    return examples


def _refused(serializer: Any, candidates: tuple[Any, ...]) -> DomainError | None:
    """The VALIDATION_FAILED the serializer answers the first candidate input it refuses with."""
    for data in candidates:
        try:
            parse(serializer, data)
        except ValidationError as exc:
            return as_domain_error(exc)
    return None


class EnvelopeAutoSchema(AutoSchema):
    def operation_doc(self) -> OperationDoc | None:
        doc = self.view.doc if isinstance(self.view, ApiView) else None
        if doc is None:
            warn(f"{type(self.view).__name__} declares no OperationDoc (ApiView.doc)")
        return doc

    def get_summary(self) -> str | None:
        doc = self.operation_doc()
        return doc.summary if doc else None

    def get_description(self) -> str:  # type: ignore[override]
        """The view's ``doc`` and who may call (the rate limit is added once every operation is
        known, ``rate_limit_descriptions``). Never a docstring: those speak to developers."""
        doc = self.operation_doc()
        if doc is None or not isinstance(self.view, ApiView):
            return ""
        return f"{doc.markdown}\n\n**Authentication:** {self.view.documented_access()}"

    def get_extensions(self) -> dict[str, Any]:
        limit = self.view.documented_rate_limit() if isinstance(self.view, ApiView) else None
        return {"x-rateLimit": limit.as_extension()} if limit else {}

    def get_operation_id(self) -> str:
        declared = self.view.operation_id if isinstance(self.view, ApiView) else None
        return declared or str(super().get_operation_id())

    def get_override_parameters(self) -> list[Any]:
        """The view's own parameters, then the fields of the serializer that parses its query."""
        parameters = list(super().get_override_parameters())
        if isinstance(self.view, ApiView) and self.view.query_serializer is not None:
            parameters.append(self.view.query_serializer)
        return parameters

    def _get_parameters(self) -> list[dict[str, Any]]:
        """The parameters with their examples (``ApiView.doc``). An optional query parameter
        may be sent empty, meaning "not given"; a path parameter is one segment of text
        without NUL."""
        parameters: list[dict[str, Any]] = super()._get_parameters()
        doc = self.operation_doc()
        examples = dict(doc.parameters) if doc else {}
        for parameter in parameters:
            if parameter["name"] in examples:
                parameter["example"] = examples.pop(parameter["name"])
            schema = parameter.get("schema", {})
            if parameter["in"] == "query" and not parameter.get("required"):
                parameter["allowEmptyValue"] = True
            elif parameter["in"] == "path" and not {"enum", "pattern"} & set(schema):
                parameter["schema"] = {**PATH_SEGMENT, **schema}
        for name in examples:
            warn(f"{type(self.view).__name__}: example of an undocumented parameter {name!r}")
        if self.takes_idempotency_key():
            parameters.append(dict(IDEMPOTENCY_KEY_PARAMETER))
        return parameters

    def takes_idempotency_key(self) -> bool:
        return (
            self.method == "POST" and isinstance(self.view, ApiView) and self.view.idempotent_posts
        )

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        """A request body takes no property it does not declare, and matches the schema of
        each rule across its fields (``StrictSerializer.rules``)."""
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictSerializer):
            schema["additionalProperties"] = False
            rules = [rule.schema() for rule in serializer.rules]
            if rules:
                schema["allOf"] = rules
        return schema

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, UniqueListField):
            schema["uniqueItems"] = True
        return schema

    def get_request_serializer(self) -> Any:
        if isinstance(self.view, ApiView):
            return self.view.body_serializer
        return super().get_request_serializer()

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        body: dict[str, Any] | None = super()._get_request_body(direction)
        doc = self.operation_doc()
        example = doc.request if doc else None
        if body is not None and example is None:
            warn(f"{type(self.view).__name__}: no example of the request body (doc.request)")
        if body is None and example is not None:
            warn(f"{type(self.view).__name__}: an example body for an operation without one")
        for media in (body or {}).get("content", {}).values():
            media["example"] = example
        return body

    def _get_response_for_code(
        self,
        serializer: Any,
        status_code: str,
        media_types: Any = None,
        direction: Literal["request", "response"] = "response",
    ) -> dict[str, Any]:
        if is_shape(serializer):
            # A schema given as a dict is used as it is.
            serializer = shape_schema(serializer, self.registry)
        response: dict[str, Any] = super()._get_response_for_code(
            serializer, status_code, media_types, direction
        )
        return response

    def endpoint_errors(self) -> list[str]:
        """The generic errors, those of the view's authentication classes (their ``errors``), then
        the view's own (``ApiView.declared_errors``)."""
        view = self.view
        keys: list[str] = list(GENERIC_ERRORS)
        if self.method in ("POST", "PUT", "PATCH"):
            keys += BODY_ERRORS
        for authenticator in getattr(view, "authentication_classes", []):
            keys += getattr(authenticator, "errors", ())
        if isinstance(view, ApiView):
            keys += view.declared_errors()
        if self.takes_idempotency_key():
            keys += IDEMPOTENCY_ERRORS
        return list(dict.fromkeys(keys))

    def refused_input(self) -> DomainError:
        """What this operation answers a bad input with: its own serializer's refusal of an empty
        body (or of one that is not an object) or query (or of one giving each parameter "-"),
        else a path it cannot take."""
        view = self.view
        body = view.body_serializer if isinstance(view, ApiView) else None
        query = view.query_serializer if isinstance(view, ApiView) else None
        refused = (
            _refused(body, ({}, []))
            if body is not None
            else _refused(query, ({}, dict.fromkeys(query().fields, "-")))
            if query is not None
            else None
        )
        return refused or validation_error({"path": NOT_TEXT})

    def _get_response_bodies(
        self, direction: Literal["request", "response"] = "response"
    ) -> dict[str, Any]:
        declared = self.get_response_serializers()
        responses: dict[str, Any] = (
            # drf-spectacular takes a shape for an unknown object unless inside ``list[...]``.
            {"200": self._get_response_for_code(declared, "200", direction=direction)}
            if is_typeddict(declared) or isinstance(declared, TypeAliasType)
            else super()._get_response_bodies(direction)
        )
        doc = self.operation_doc()
        if doc is not None and doc.response is None:
            warn(f"{type(self.view).__name__}: no example of the answer (doc.response)")
        for response in responses.values():
            for media in response.get("content", {}).values():
                response["description"] = _success_description(media.get("schema", {}))
                media["schema"] = _success_schema(media.get("schema", {}))
                if doc is not None and doc.response is not None:
                    media["example"] = _success_example(doc.response)
        by_status: dict[int, list[ErrorSpec]] = defaultdict(list)
        errors = self.endpoint_errors()
        for key in errors:
            spec = CATALOG[key]
            by_status[spec.status].append(spec)
        refused_input = self.refused_input()
        details = dict(doc.error_details) if doc else {}
        for key in set(details) - set(errors):
            warn(f"{type(self.view).__name__}: details of an error it does not declare: {key}")
        for status, specs in sorted(by_status.items()):
            responses[str(status)] = {
                "description": "; ".join(f"{s.code} {s.key}: {s.message}" for s in specs),
                "content": {
                    "application/json": {
                        "schema": _error_schema(specs),
                        "examples": _error_examples(specs, refused_input, details),
                    }
                },
            }
        idempotent = IDEMPOTENCY_HEADERS if self.takes_idempotency_key() else {}
        for response in responses.values():
            response["headers"] = {**response.get("headers", {}), **REQUEST_ID_HEADER, **idempotent}
        return responses


def _success_description(data: Mapping[str, Any]) -> str:
    """What a success answers, named by its shape: the envelope with ``data`` holding it."""
    return f"Done: the success envelope; its `data` is {_named(data)}."


def _named(schema: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        return f"described by `{str(schema['$ref']).rsplit('/', 1)[-1]}`"
    if schema.get("type") == "array":
        return f"a list, each entry {_named(schema.get('items', {}))}"
    return "the object below"


class GameFieldSchema(OpenApiSerializerFieldExtension):
    """A game as its string or its number (``"730"`` or ``730``), as the field parses it."""

    target_class = GameField

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        games: tuple[int, ...] = self.target.games
        as_text = {"type": "string", "enum": [str(game) for game in games]}
        if direction == "response":
            return as_text
        return {"oneOf": [as_text, {"type": "integer", "enum": list(games)}]}


class QueryIntegerSchema(OpenApiSerializerFieldExtension):
    """An integer of a query string as the text the field takes: a string whose pattern holds
    the digits and the bounds (``core.api.digits``), never longer than DRF reads."""

    target_class = QueryIntegerField
    match_subclasses = True

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        return {
            "type": "string",
            "pattern": integer_text_pattern(self.target.accepted_ranges()),
            "maxLength": QueryIntegerField.MAX_STRING_LENGTH,
        }


class AboveZeroDecimalSchema(OpenApiSerializerFieldExtension):
    """A number above zero: the decimal's own schema with an exclusive minimum of 0 (JSON Schema
    2020-12's number, not OpenAPI 3.0's flag beside ``minimum``)."""

    target_class = AboveZeroDecimalField

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        schema.pop("minimum", None)
        return {**schema, "exclusiveMinimum": 0}


def rate_limit_descriptions(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: each description ends with its operation's rate limit, naming the
    other operations that spend the same budget (only the whole document knows them)."""
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, methods in result.get("paths", {}).items()
        for method, operation in methods.items()
    ]
    by_budget: dict[str, list[str]] = defaultdict(list)
    for name, operation in operations:
        if "x-rateLimit" in operation:
            by_budget[operation["x-rateLimit"]["budget"]].append(name)
    for name, operation in operations:
        limit = operation.get("x-rateLimit")
        peers = [peer for peer in by_budget[limit["budget"]] if peer != name] if limit else []
        paragraph = rate_limit_markdown(limit, peers)
        description = operation.get("description", "")
        operation["description"] = f"{description}\n\n{paragraph}" if description else paragraph
    return result
