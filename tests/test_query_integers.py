"""Integers of query strings: the document gives each as the text the server takes (a string
whose pattern holds the digits and the bounds, ``core.api.digits``), since OpenAPI 3.1's
``type: integer`` would admit ``20.0``, which the server refuses in a query (decisions, "OpenAPI
3.1"). The pattern and the field that parses the parameter agree on every text tried."""

import random
import re
from typing import Any

import pytest
from rest_framework.exceptions import ValidationError

from core.api.digits import integer_text_pattern
from core.api.serializers import QueryIntegerField
from tests.test_openapi import _routed_views
from tests.test_openapi_docs import document  # noqa: F401 (the fixture)


def _matches(pattern: str, text: str) -> bool:
    # JSON Schema's patterns are ECMA-262: ``$`` ends the input (Python's ``$`` also matches
    # before a final newline).
    return re.search(pattern.replace("$", r"\Z"), text) is not None


@pytest.mark.parametrize(
    "ranges",
    [
        ((1, 100),),
        ((0, 2**31 - 1),),
        ((-1, -1), (1, 1000)),
        ((-5, 17),),
        ((123, 4567),),
        ((7, 7),),
        ((5, 10**6),),
    ],
)
def test_the_pattern_takes_exactly_the_texts_of_the_integers_in_its_ranges(ranges):
    pattern = integer_text_pattern(ranges)
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
    rng = random.Random(7)
    numbers = {*range(-1100, 11000), low - 1, high + 1, 2**31, -(2**31), 10**12}
    numbers |= {rng.randint(low - 10, high + 10) for _ in range(5000)}
    for number in numbers:
        taken = any(first <= number <= last for first, last in ranges)
        sign = "-" if number < 0 else ""
        for text in (str(number), f"{sign}000{abs(number)}"):
            assert _matches(pattern, text) == taken, (ranges, text, pattern)
    assert _matches(pattern, "-0") == any(first <= 0 <= last for first, last in ranges)
    for text in ("", "-", "+1", "1.0", "1e1", " 1", "1 ", "1_0", "0x1", "\u0661", "1\n"):
        assert not _matches(pattern, text), (ranges, text)


def test_an_empty_range_is_a_mistake():
    with pytest.raises(ValueError, match="empty range"):
        integer_text_pattern(((2, 1),))


def _parses(field: QueryIntegerField, text: str) -> bool:
    try:
        field.run_validation(text)
    except ValidationError:
        return False
    return True


def _texts(field: QueryIntegerField) -> list[str]:
    texts = ["0", "-0", "00", "-1", "1", "-01", "20.0", "2e1", "+5", " 5", "5 ", "1_0", "abc"]
    for low, high in field.accepted_ranges():
        for value in (low - 1, low, low + 1, high - 1, high, high + 1):
            texts += [str(value), f"{'-' if value < 0 else ''}00{abs(value)}", f"{value}.0"]
    texts += ["0" * 999 + "1", "0" * 1000 + "1"]  # DRF reads at most 1000 characters
    return texts


def test_each_query_integer_of_the_document_says_what_its_field_takes(document):  # noqa: F811
    checked = 0
    for path, view in _routed_views().items():
        serializer = getattr(view, "query_serializer", None)
        if serializer is None:
            continue
        (operation,) = document["paths"][path].values()
        parameters: dict[str, Any] = {p["name"]: p for p in operation["parameters"]}
        for name, field in serializer().fields.items():
            if not isinstance(field, QueryIntegerField):
                continue
            schema = parameters[name]["schema"]
            assert schema["type"] == "string", (path, name)
            assert _matches(schema["pattern"], schema["default"]), (path, name)
            for text in _texts(field):
                documented = len(text) <= schema["maxLength"] and _matches(schema["pattern"], text)
                assert documented == _parses(field, text), (path, name, text)
            checked += 1
    assert checked >= 20
