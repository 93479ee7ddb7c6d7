"""OpenAPI generation: every body in its envelope, each response shape a named component, the
input a view parses, and every error each endpoint can give."""

import types
from collections import defaultdict
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

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import (
    ComponentRegistry,
    ResolvedComponent,
    build_object_type,
    get_doc,
    resolve_type_hint,
    safe_ref,
)
from typing_extensions import TypeAliasType

from config.api.serializers import StrictSerializer, UniqueListField
from config.api.views import ApiView
from core.errors import CATALOG, ErrorSpec
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
    if origin in (Union, types.UnionType):
        members = [shape_schema(arg, registry) for arg in args if arg is not type(None)]
        schema = members[0] if len(members) == 1 else {"oneOf": members}
        return safe_ref({**schema, "nullable": True}) if type(None) in args else schema
    if hint is Any:
        return {}
    # str, int, bool, float, Decimal, datetime, Literal[...], dict[str, ...]
    basic: dict[str, Any] = resolve_type_hint(hint)
    return basic


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


class GameFieldExtension(OpenApiSerializerFieldExtension):
    """``"730"`` or ``730``: the game as a string or as the number, as merchants send both."""

    target_class = "config.api.serializers.GameField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: Any) -> Any:
        games = list(self.target.games)
        return {
            "oneOf": [
                {"type": "string", "enum": [str(game) for game in games]},
                {"type": "integer", "enum": games},
            ]
        }


class EnvelopeAutoSchema(AutoSchema):
    def get_description(self) -> str:  # type: ignore[override]
        """The handler's docstring, or the view class's own: never one inherited from a base
        view, which speaks to the developer (how the caller authenticates, which hooks a pair
        implements)."""
        handler_doc = get_doc(getattr(self.view, self.method.lower(), None))
        own_doc = get_doc(type(self.view)) if type(self.view).__doc__ else ""
        return str(handler_doc or own_doc)

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
        """An optional query parameter may be sent empty, meaning "not given"; a path parameter
        is one segment of text without NUL."""
        parameters: list[dict[str, Any]] = super()._get_parameters()
        for parameter in parameters:
            schema = parameter.get("schema", {})
            if parameter["in"] == "query" and not parameter.get("required"):
                parameter["allowEmptyValue"] = True
            elif parameter["in"] == "path" and not {"enum", "pattern"} & set(schema):
                parameter["schema"] = {**PATH_SEGMENT, **schema}
        return parameters

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
        return list(dict.fromkeys(keys))

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
        for response in responses.values():
            for media in response.get("content", {}).values():
                media["schema"] = _success_schema(media.get("schema", {}))
        by_status: dict[int, list[ErrorSpec]] = defaultdict(list)
        for key in self.endpoint_errors():
            spec = CATALOG[key]
            by_status[spec.status].append(spec)
        for status, specs in sorted(by_status.items()):
            responses[str(status)] = {
                "description": "; ".join(f"{s.code} {s.key}: {s.message}" for s in specs),
                "content": {"application/json": {"schema": _error_schema(specs)}},
            }
        for response in responses.values():
            response["headers"] = {**response.get("headers", {}), **REQUEST_ID_HEADER}
        return responses
