"""Strict input parsing: JSON types are checked, not coerced, and unknown properties refused."""

import threading
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from rest_framework import serializers

UNKNOWN_FIELD = "Unknown field."


class StrictSerializer(serializers.Serializer):
    """Refuses properties it does not declare, at any depth it is nested."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = (
            {key: [UNKNOWN_FIELD] for key in data if key not in self.fields}
            if isinstance(data, Mapping)
            else {}
        )
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**exc.detail, **unknown}) from exc
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class StrictDecimalField(serializers.DecimalField):
    """A JSON number (never a string), kept as Decimal."""

    def to_internal_value(self, data: Any) -> Decimal:
        if isinstance(data, bool) or not isinstance(data, (int, Decimal)):
            self.fail("invalid")
        try:
            return Decimal(super().to_internal_value(data))
        except InvalidOperation:
            # DRF rounds to decimal_places within the context precision: 1e30 in cents overflows.
            self.fail("invalid")


# Each thread's bound fields of each serializer class parsed without options (``_fields_of``).
_KEPT_FIELDS = threading.local()


def _fields_of(serializer_class: type[serializers.Serializer]) -> Any:
    """The class's fields, built and bound once per thread. DRF deep-copies every declared field
    for each serializer it builds: a quarter of authenticate-client's CPU (bench/README.md).
    A field keeps nothing of one validation for the next; kept per thread, never shared by two
    validations at once; bound to a serializer with no context, as ``parse`` builds them."""
    kept: dict[type[serializers.Serializer], Any] = _KEPT_FIELDS.__dict__.setdefault("fields", {})
    fields = kept.get(serializer_class)
    if fields is None:
        fields = kept[serializer_class] = serializer_class().fields
    return fields


def parse(serializer_class: type[serializers.Serializer], data: Any, **kwargs: Any) -> Any:
    """Validated data of a body or query, or VALIDATION_FAILED with dotted ``fields``."""
    serializer = serializer_class(data=data, **kwargs)
    if not kwargs:
        serializer.__dict__["fields"] = _fields_of(serializer_class)  # the cached_property's slot
    if not serializer.is_valid():
        raise serializers.ValidationError(serializer.errors)
    return serializer.validated_data


class StrictDateTimeField(serializers.DateTimeField):
    def to_internal_value(self, value: Any) -> Any:
        if not isinstance(value, str):
            self.fail("invalid", format="ISO 8601 date-time string")
        return super().to_internal_value(value)


class StrictChoiceField(serializers.ChoiceField):
    """A choice given as the JSON type of the choices themselves (``5``, not ``"5"``)."""

    def to_internal_value(self, data: Any) -> Any:
        kinds = {type(choice) for choice in self.choices}
        if isinstance(data, bool) or type(data) not in kinds:
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class GameField(serializers.Field):
    """``"730"`` or ``"252490"``; the number form is accepted too, as merchants send both."""

    def __init__(self, *, games: tuple[int, ...], **kwargs: Any) -> None:
        self.games = games
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if (
            isinstance(data, bool)
            or not isinstance(data, (str, int))
            or str(data) not in {str(game) for game in self.games}
        ):
            raise serializers.ValidationError(
                f"Must be one of {', '.join(str(g) for g in self.games)}."
            )
        return int(data)

    def to_representation(self, value: Any) -> str:
        return str(value)
