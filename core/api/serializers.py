"""Strict input parsing: JSON types are checked, not coerced, and unknown properties refused.
An integer of a body is JSON Schema's (OpenAPI 3.1): ``2.0`` is the integer 2 (``json_integer``);
an integer of a query string is written in digits (``QueryIntegerField``).

What a field refuses, the OpenAPI document says (``core.api.schema`` reads the same
declarations): choices are enums, bounds are minimum/maximum (a query integer's are in its
pattern) and lengths, a ``RegexValidator``
is the pattern (written ``\\A...\\Z`` with ASCII classes: the document shows ``^...$``), and the
rules across fields of a body are ``StrictSerializer.rules``. In a query string an empty value of an
optional parameter means "not given" (``allowEmptyValue`` in the document), as DRF reads forms."""

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from django.core.validators import RegexValidator
from rest_framework import serializers

UNKNOWN_FIELD = "Unknown field."
# PostgreSQL text cannot hold NUL, so no string of the API carries one; said on every free string.
NO_NUL = RegexValidator(r"\A[^\x00]*\Z", "Must not contain NUL characters.")


@dataclass(frozen=True)
class AnyOfRequired:
    """At least one of ``fields`` is given (not null, not blank)."""

    fields: tuple[str, ...]

    def error(self, attrs: Mapping[str, Any]) -> dict[str, str] | None:
        if any(attrs.get(name) not in (None, "") for name in self.fields):
            return None
        return {self.fields[0]: f"Give {' or '.join(self.fields)}."}

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [{"required": [name]} for name in self.fields]}


@dataclass(frozen=True)
class OnlyWhen:
    """``field`` may be given only while ``other`` (given or by its default) is one of
    ``values`` (as JSON has them; compared as text, so ``730`` and ``"730"`` are one)."""

    field: str
    other: str
    values: tuple[Any, ...]

    def error(self, attrs: Mapping[str, Any]) -> dict[str, str] | None:
        allowed = {str(value) for value in self.values}
        if attrs.get(self.field) in (None, "") or str(attrs.get(self.other)) in allowed:
            return None
        shown = " or ".join(sorted({str(value) for value in self.values}))
        return {self.field: f"Only with {self.other} {shown}."}

    def schema(self) -> dict[str, Any]:
        return {
            "anyOf": [
                {"not": {"required": [self.field]}},
                {"properties": {self.other: {"enum": list(self.values)}}},
            ]
        }


Rule = AnyOfRequired | OnlyWhen


# Checks its ``rules`` across fields. A body has each rule in the document as a schema it must
# match too; parameters cannot say so, and an operation whose query has a rule states it in its
# description (decisions section 7). (A comment: a docstring would describe every input.)
class RuledSerializer(serializers.Serializer):
    rules: ClassVar[tuple[Rule, ...]] = ()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors: dict[str, str] = {}
        for rule in self.rules:
            errors.update(rule.error(attrs) or {})
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


# Refuses properties it does not declare, at any depth it is nested (the document says
# ``additionalProperties: false``).
class StrictSerializer(RuledSerializer):
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
    """Text as sent: never trimmed (``" x"`` is not ``"x"``), never NUL."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        if not any(isinstance(validator, RegexValidator) for validator in self.validators):
            self.validators.append(NO_NUL)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


# The most digits an integer of a body may have: Python's own limit on reading one from text
# (``sys.get_int_max_str_digits``), which a JSON integer literal meets first. It keeps
# ``1e999999999`` from being expanded into a billion digits.
MAX_INTEGER_DIGITS = 4300


def json_integer(data: Any) -> int | None:
    """The integer a JSON value is, as JSON Schema 2020-12 (OpenAPI 3.1) counts them: an integer
    literal, or a number with a zero fractional part (``2.0``, ``2e0``, ``20e-1``; the JSON parser
    hands numbers with a fraction or an exponent over as ``Decimal``). None for anything else:
    ``2.5``, a string, a boolean, null."""
    if isinstance(data, bool):
        return None
    if isinstance(data, int):
        return data
    if (
        isinstance(data, Decimal)
        and data.is_finite()
        and (data.is_zero() or data.adjusted() < MAX_INTEGER_DIGITS)
        and data == data.to_integral_value()
    ):
        return int(data)
    return None


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer (``json_integer``): ``2`` and ``2.0``, never ``"2"``, ``2.5`` or ``true``."""

    def to_internal_value(self, data: Any) -> int:
        value = json_integer(data)
        if value is None:
            self.fail("invalid")
        return int(super().to_internal_value(value))


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


class AboveZeroDecimalField(StrictDecimalField):
    """A JSON number above zero (``exclusiveMinimum``): zero and below are VALIDATION_FAILED."""

    default_error_messages = {"not_above_zero": "Must be above 0."}

    def to_internal_value(self, data: Any) -> Decimal:
        value = super().to_internal_value(data)
        if value <= 0:
            self.fail("not_above_zero")
        return value


class UniqueListField(serializers.ListField):
    """A JSON array of distinct entries (``uniqueItems``)."""

    def to_internal_value(self, data: Any) -> list[Any]:
        values: list[Any] = super().to_internal_value(data)
        if len(set(values)) != len(values):
            raise serializers.ValidationError("Must not repeat an entry.")
        return values


class QueryIntegerField(serializers.IntegerField):
    """An integer in a query string: digits with an optional minus, nothing else (DRF's own
    field would take ``1.0``, `` 1`` and ``1_000``), within its bounds.

    The document gives it as the text it is, a string with a pattern holding the bounds
    (``core.api.digits``): ``type: integer`` would admit ``20.0`` (JSON Schema 2020-12), which a
    client holding a float writes so. Its description says the bounds in words."""

    def __init__(self, *, min_value: int, max_value: int, help_text: str = "", **kwargs: Any):
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)
        self.bounds = (min_value, max_value)
        ranges = " or ".join(
            str(low) if low == high else f"{low} to {high}" for low, high in self.accepted_ranges()
        )
        self.help_text = "; ".join(filter(None, [help_text, f"an integer in digits, {ranges}"]))

    def accepted_ranges(self) -> tuple[tuple[int, int], ...]:
        """The values taken, as ranges (both ends included)."""
        return (self.bounds,)

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str) or not _INTEGER.fullmatch(data):
            self.fail("invalid")
        return int(super().to_internal_value(data))

    def to_representation(self, value: Any) -> str:  # type: ignore[override]
        """As a query string writes it (the document shows the default so)."""
        return str(int(value))


class QueryDecimalField(serializers.DecimalField):
    """A number in a query string, as JSON writes one, kept as Decimal."""

    def to_internal_value(self, data: Any) -> Decimal:
        if not isinstance(data, str) or not _NUMBER.fullmatch(data):
            self.fail("invalid")
        return Decimal(super().to_internal_value(data))


_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?", re.ASCII)
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})",
    re.ASCII,
)


class Rfc3339DateTimeField(serializers.DateTimeField):
    """An RFC 3339 date-time (``format: date-time``): a date, ``T``, a time with seconds and an
    offset (``Z`` or ``+hh:mm``); fractions beyond microseconds are dropped. Kept in UTC."""

    def to_internal_value(self, value: Any) -> datetime:
        if not isinstance(value, str) or not _RFC3339.fullmatch(value):
            self.fail("invalid", format="RFC 3339 date-time, e.g. 2025-01-31T12:00:00Z")
        text = value.upper().replace("Z", "+00:00")
        whole, dot, rest = text.partition(".")
        if dot:  # at most six fraction digits for Python, whatever the offset after them
            digits = len(rest) - len(rest.lstrip("0123456789"))
            text = f"{whole}.{rest[: min(digits, 6)]}{rest[digits:]}"
        try:
            return datetime.fromisoformat(text).astimezone(UTC)
        except (ValueError, OverflowError):
            self.fail("invalid", format="RFC 3339 date-time, e.g. 2025-01-31T12:00:00Z")


# Each thread's bound fields of each serializer class (``serializer_fields``).
_KEPT_FIELDS = threading.local()


def serializer_fields(serializer_class: type[serializers.Serializer]) -> Any:
    """The class's fields (parsed without options), built and bound once per thread. DRF
    deep-copies every declared field for each serializer it builds: a quarter of
    authenticate-client's CPU (bench/README.md), and 7 % of a market item read's, which built a
    serializer only to name its query parameters (``ApiView.parse_query``).
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
        # The kept fields, in the slot of DRF's cached ``fields`` property.
        serializer.__dict__["fields"] = serializer_fields(serializer_class)
    if not serializer.is_valid():
        raise serializers.ValidationError(serializer.errors)
    return serializer.validated_data


class StrictChoiceField(serializers.ChoiceField):
    """A choice given as the JSON type of the choices themselves (``5`` or ``5.0``, not ``"5"``)."""

    def to_internal_value(self, data: Any) -> Any:
        kinds = {type(choice) for choice in self.choices}
        if int in kinds and isinstance(data, Decimal):
            data = _integer_or_as_is(data)
        if isinstance(data, bool) or type(data) not in kinds:
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


def _integer_or_as_is(data: Any) -> Any:
    """A number with a zero fraction as its integer; anything else as it is, to be refused."""
    if isinstance(data, Decimal):
        value = json_integer(data)
        return data if value is None else value
    return data


class GameField(serializers.Field):
    """``"730"`` or ``"252490"``; the number form is accepted too (``730``, ``730.0``), as
    merchants send both."""

    def __init__(self, *, games: tuple[int, ...], **kwargs: Any) -> None:
        self.games = games
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        data = _integer_or_as_is(data)
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
