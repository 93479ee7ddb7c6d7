"""Response shapes (``core.shapes``: ``TypedDict``s and named aliases) as OpenAPI schemas, each
shape a component of its own name."""

import types
from typing import (
    Annotated,
    Any,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from drf_spectacular.plumbing import (
    ComponentRegistry,
    ResolvedComponent,
    build_object_type,
    resolve_type_hint,
    safe_ref,
)
from typing_extensions import TypeAliasType

from core.shapes import Doc


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
