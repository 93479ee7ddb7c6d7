"""The VALIDATION_FAILED envelope: dotted paths, strict types, at most 20 fields, first 5 named."""

from decimal import Decimal

import pytest
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from core.api.exceptions import error_body, exception_handler
from core.api.serializers import (
    GameField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
    json_integer,
    parse,
)
from core.errors import validation_error
from merchants.models import Client
from tests.factories import assert_error, auth_body

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"


def refused(api, actor, body) -> dict:
    before = Client.objects.count()
    response = api.post(AUTH, body, format="json", headers=actor.headers)
    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert Client.objects.count() == before  # nothing written on failure
    assert isinstance(error["fields"], dict)
    assert all(isinstance(reason, str) and reason for reason in error["fields"].values())
    return error


class TestThroughTheApi:
    def test_missing_required_fields(self, api, alice):
        error = refused(api, alice, {})
        assert error["fields"] == {
            "clientPlatformId": "This field is required.",
            "clientTradeUrl": "This field is required.",
        }
        assert error["message"] == "Invalid fields: clientPlatformId, clientTradeUrl"

    def test_string_for_a_number(self, api, alice):
        error = refused(api, alice, auth_body(clientData={"totalWager": "5"}))
        assert list(error["fields"]) == ["clientData.totalWager"]

    def test_number_for_a_boolean(self, api, alice):
        error = refused(api, alice, auth_body(clientData={"fiatDeposits": 1}))
        assert list(error["fields"]) == ["clientData.fiatDeposits"]

    def test_number_for_a_string(self, api, alice):
        error = refused(api, alice, auth_body(clientId=123))
        assert list(error["fields"]) == ["clientId"]

    def test_string_for_an_integer(self, api, alice):
        error = refused(api, alice, auth_body(clientData={"kycLevel": "2"}))
        assert list(error["fields"]) == ["clientData.kycLevel"]

    def test_extra_field(self, api, alice):
        error = refused(api, alice, auth_body(isAdmin=True))
        assert error["fields"] == {"isAdmin": "Unknown field."}
        assert "isAdmin" in error["message"]

    def test_too_long(self, api, alice):
        error = refused(api, alice, auth_body(clientId="a" * 129))
        assert list(error["fields"]) == ["clientId"]
        assert "128" in error["fields"]["clientId"]

    def test_nested_paths_are_dotted(self, api, alice):
        error = refused(api, alice, auth_body(clientData={"kycLevel": 7, "fiatDeposits": "yes"}))
        assert set(error["fields"]) == {"clientData.kycLevel", "clientData.fiatDeposits"}

    def test_no_fields_outside_validation_failed(self, api, alice):
        response = api.post(AUTH, auth_body(), format="json")
        assert "fields" not in response.json()["error"]

    def test_at_most_20_fields_and_5_named(self, api, alice):
        body = {f"extra{n:02d}": n for n in range(25)}
        body["clientData"] = {f"nested{n}": n for n in range(3)}
        error = refused(api, alice, body)
        # 2 missing + 25 unknown at the top + 3 unknown inside clientData = 30 problems.
        assert len(error["fields"]) == 20
        assert error["message"].startswith("Invalid fields: ")
        named = error["message"].removeprefix("Invalid fields: ").split(" (and ")[0].split(", ")
        assert named == list(error["fields"])[:5]
        assert error["message"].endswith("(and 25 more)")

    def test_a_valid_request_after_a_refused_one_works(self, api, alice):
        refused(api, alice, auth_body(clientData={"kycLevel": 4}))
        response = api.post(
            AUTH, auth_body(clientData={"kycLevel": 3}), format="json", headers=alice.headers
        )
        assert response.status_code == 200
        assert Client.objects.get(merchant=alice.merchant).kyc_level == 3


class TestValidationErrorHelper:
    def test_25_fields_keep_20_and_name_5(self):
        fields = {f"field{n:02d}": f"reason {n}" for n in range(25)}
        error = validation_error(fields)
        body = error_body(error)
        assert error.spec.status == 400
        assert body["code"] == 1001
        assert body["key"] == "VALIDATION_FAILED"
        assert list(body["fields"]) == [f"field{n:02d}" for n in range(20)]
        assert body["fields"]["field19"] == "reason 19"
        assert body["message"] == (
            "Invalid fields: field00, field01, field02, field03, field04 (and 20 more)"
        )

    def test_exactly_5_fields_names_all_without_more(self):
        body = error_body(validation_error({f"f{n}": "bad" for n in range(5)}))
        assert body["message"] == "Invalid fields: f0, f1, f2, f3, f4"
        assert len(body["fields"]) == 5

    def test_6_fields(self):
        body = error_body(validation_error({f"f{n}": "bad" for n in range(6)}))
        assert body["message"] == "Invalid fields: f0, f1, f2, f3, f4 (and 1 more)"

    def test_one_field(self):
        body = error_body(validation_error({"body": "Malformed JSON"}))
        assert body == {
            "code": 1001,
            "key": "VALIDATION_FAILED",
            "message": "Invalid fields: body",
            "fields": {"body": "Malformed JSON"},
        }

    def test_exactly_20_fields_are_all_kept(self):
        body = error_body(validation_error({f"f{n}": "bad" for n in range(20)}))
        assert len(body["fields"]) == 20
        assert body["message"].endswith("(and 15 more)")


class TestDottedPaths:
    def render(self, detail) -> dict:
        response = exception_handler(ValidationError(detail), {})
        assert response.status_code == 400
        assert response.data["key"] == "VALIDATION_FAILED"
        return response.data["fields"]

    def test_list_indexes(self):
        detail = {"items": [{}, {"price": ["A valid number is required."]}]}
        assert self.render(detail) == {"items.1.price": "A valid number is required."}

    def test_deep_nesting_and_first_reason_only(self):
        detail = {"a": {"b": [{"c": ["first", "second"]}]}}
        assert self.render(detail) == {"a.b.0.c": "first"}

    def test_top_level_non_field_errors_are_body(self):
        assert self.render({"non_field_errors": ["Bad combination."]}) == {
            "body": "Bad combination."
        }

    def test_nested_non_field_errors_belong_to_their_parent(self):
        detail = {"clientData": {"non_field_errors": ["Invalid data."]}}
        assert self.render(detail) == {"clientData": "Invalid data."}

    def test_list_of_strings_at_the_top(self):
        assert self.render(["Expected an object."]) == {"body": "Expected an object."}

    def test_list_of_scalars_inside_a_list(self):
        detail = {"ids": {0: ["Not a uuid."], 3: ["Not a uuid."]}}
        assert self.render(detail) == {"ids.0": "Not a uuid.", "ids.3": "Not a uuid."}


class _Item(StrictSerializer):
    price = StrictDecimalField(max_digits=10, decimal_places=2)
    count = StrictIntegerField(min_value=1)


class _Order(StrictSerializer):
    name = StrictCharField(max_length=5)
    rush = StrictBooleanField(required=False)
    items = _Item(many=True)


class TestStrictSerializers:
    def fields(self, data) -> dict:
        with pytest.raises(serializers.ValidationError) as caught:
            parse(_Order, data)
        response = exception_handler(caught.value, {})
        return response.data["fields"]

    def test_valid(self):
        parsed = parse(_Order, {"name": "ab", "items": [{"price": Decimal("1.50"), "count": 2}]})
        assert parsed["items"][0]["price"] == Decimal("1.50")

    def test_unknown_inside_a_list_item(self):
        data = {"name": "ab", "items": [{"price": 1, "count": 1, "colour": "red"}]}
        assert self.fields(data) == {"items.0.colour": "Unknown field."}

    def test_wrong_types_at_every_depth(self):
        data = {"name": 5, "rush": "no", "items": [{"price": "1", "count": True}]}
        assert set(self.fields(data)) == {"name", "rush", "items.0.price", "items.0.count"}

    def test_too_long(self):
        assert set(self.fields({"name": "abcdef", "items": []})) == {"name"}

    @pytest.mark.parametrize("count", ["2.0", "2e0", "20e-1", "2.000", "0.2e1"])
    def test_a_number_with_a_zero_fraction_is_that_integer(self, count):
        # JSON Schema 2020-12 (the OpenAPI 3.1 document) counts 2.0 as the integer 2; the JSON
        # parser hands it over as Decimal.
        parsed = parse(_Order, {"name": "ab", "items": [{"price": 1, "count": Decimal(count)}]})

        assert parsed["items"][0]["count"] == 2
        assert type(parsed["items"][0]["count"]) is int

    @pytest.mark.parametrize("count", [Decimal("2.5"), Decimal("2.0000001"), "2", True])
    def test_a_fraction_a_string_or_a_boolean_is_not_an_integer(self, count):
        data = {"name": "ab", "items": [{"price": 1, "count": count}]}
        assert self.fields(data) == {"items.0.count": "A valid integer is required."}

    def test_an_integer_with_a_zero_fraction_keeps_its_bounds(self):
        data = {"name": "ab", "items": [{"price": 1, "count": Decimal("0.0")}]}
        assert set(self.fields(data)) == {"items.0.count"}

    @pytest.mark.parametrize("value", [Decimal("1e30"), Decimal("1e400"), Decimal("-1e30")])
    def test_numbers_beyond_the_precision_are_invalid_not_a_crash(self, value):
        with pytest.raises(serializers.ValidationError) as caught:
            parse(_Money, {"amount": value})
        assert exception_handler(caught.value, {}).data["fields"] == {
            "amount": "A valid number is required."
        }


class _Money(StrictSerializer):
    amount = StrictDecimalField(max_digits=None, decimal_places=2)


class _Pick(StrictSerializer):
    level = StrictChoiceField(choices=[1, 2, 3], required=False)
    colour = StrictChoiceField(choices=["1", "red"], required=False)
    game = GameField(games=(730, 252490), required=False)


class TestJsonIntegers:
    """An integer of a body as JSON Schema 2020-12 has it, wherever a body takes one."""

    @pytest.mark.parametrize(
        ("value", "integer"),
        [
            (7, 7),
            (Decimal("7.0"), 7),
            (Decimal("-7e0"), -7),
            (Decimal("70e-1"), 7),
            (Decimal("-0.0"), 0),
            (Decimal("0e999999999"), 0),
            (Decimal("1e4299"), 10**4299),
        ],
    )
    def test_integers(self, value, integer):
        assert json_integer(value) == integer

    @pytest.mark.parametrize(
        "value",
        [
            Decimal("7.5"),
            Decimal("1e-999999999"),
            Decimal("1e4300"),  # more digits than an integer literal may have
            Decimal("1e999999999"),  # refused without writing its billion digits
            Decimal("Infinity"),
            Decimal("NaN"),
            True,
            "7",
            None,
            7.0,  # the JSON parser never hands over a float
        ],
    )
    def test_not_integers(self, value):
        assert json_integer(value) is None

    def test_a_choice_of_integers_takes_a_zero_fraction(self):
        assert parse(_Pick, {"level": Decimal("2.0")}) == {"level": 2}
        assert parse(_Pick, {"game": Decimal("730.0")}) == {"game": 730}
        assert parse(_Pick, {"game": Decimal("2.5249e5")}) == {"game": 252490}

    @pytest.mark.parametrize(
        "data",
        [
            {"level": Decimal("2.5")},
            {"level": "2"},
            {"level": True},
            {"colour": Decimal("1.0")},  # a choice of strings is not given as a number
            {"game": Decimal("730.5")},
            {"game": "730.0"},  # the string form is the choice's own text
        ],
    )
    def test_and_refuses_the_rest(self, data):
        with pytest.raises(serializers.ValidationError) as caught:
            parse(_Pick, data)
        assert set(exception_handler(caught.value, {}).data["fields"]) == set(data)
