"""The OpenAPI schemas of the API's own serializer fields: drf-spectacular uses an extension once
its module is imported (``core.api.schema`` imports this one)."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema

from core.api.digits import integer_text_pattern
from core.api.serializers import AboveZeroDecimalField, GameField, QueryIntegerField


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
