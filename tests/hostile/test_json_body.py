"""Hostile JSON bodies: refused as VALIDATION_FAILED before they reach a parser's recursion, a
serializer's error message or the database; valid ones parsed exactly as before (Decimal)."""

import json
from decimal import Decimal

import pytest

from core.api.jsonbody import MAX_DEPTH, BodyRefusedError, json_body_loads, nesting_exceeds
from merchants.models import Client
from tests.factories import assert_error, auth_body

pytestmark = pytest.mark.django_db

AUTH = "/auth/authenticate-client"
UNSTORABLE = "Must not contain NUL characters or unpaired surrogates."


def post(api, actor, path: str, raw: bytes):
    return api.post(path, raw, content_type="application/json", headers=actor.headers)


def refused_fields(response) -> dict[str, str]:
    fields: dict[str, str] = assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]
    return fields


def nested(depth: int, innermost: bytes = b"1") -> bytes:
    return b'{"a":' * (depth - 1) + b"[" + innermost + b"]" + b"}" * (depth - 1)


class TestNesting:
    # 1,000 levels: the 100,000 that kill a process are sent to a real server
    # (test_web_server.py), where a regression kills a gunicorn worker, not the test run.
    @pytest.mark.parametrize(
        "body",
        [b"[" * 1_000 + b"]" * 1_000, b'{"a":' * 1_000 + b"1" + b"}" * 1_000],
        ids=["arrays", "objects"],
    )
    def test_a_deeply_nested_body_is_refused_without_parsing_it(self, api, alice, body):
        response = post(api, alice, "/secure/buy", body)

        assert refused_fields(response) == {
            "body": f"Arrays and objects nest deeper than {MAX_DEPTH} levels."
        }

    def test_one_level_over_the_limit_is_refused(self, api, alice):
        body = nested(MAX_DEPTH + 1)

        assert refused_fields(post(api, alice, AUTH, body)) == {
            "body": "Arrays and objects nest deeper than 32 levels."
        }
        assert Client.objects.count() == 0

    def test_the_limit_itself_is_parsed(self):
        value = json_body_loads(nested(MAX_DEPTH))

        for _ in range(MAX_DEPTH - 1):
            value = value["a"]
        assert value == [1]

    def test_unclosed_brackets_count_as_the_parser_would_recurse_into_them(self):
        assert nesting_exceeds(b"[" * (MAX_DEPTH + 1), MAX_DEPTH)
        assert nesting_exceeds(b'{"a": ' * (MAX_DEPTH + 1), MAX_DEPTH)

    @pytest.mark.parametrize(
        "body",
        [
            b'["' + b"[" * 100 + b'"]',  # brackets inside a string
            b'["\\"' + b"[" * 100 + b'"]',  # after an escaped quote, still inside
            b'{"' + b"{" * 50 + b'": "' + b"}[" * 50 + b'"}',  # in names and values
            b"[" + b"[]," * 1000 + b"[]]",  # many, but side by side
        ],
        ids=["in-string", "after-escaped-quote", "in-names", "side-by-side"],
    )
    def test_brackets_that_do_not_nest_are_not_counted(self, body):
        assert not nesting_exceeds(body, MAX_DEPTH)
        json_body_loads(body)

    def test_a_string_ending_in_an_escaped_backslash_is_closed(self):
        body = b'["\\\\", ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 2)

        assert nesting_exceeds(body, MAX_DEPTH)


class TestNumbers:
    def test_numbers_are_parsed_as_before(self):
        value = json_body_loads(b'{"price": 1200.50, "tiny": 1e-8, "huge": 1e400, "count": 7}')

        assert value == {
            "price": Decimal("1200.50"),
            "tiny": Decimal("1E-8"),
            "huge": Decimal("1E+400"),
            "count": 7,
        }
        assert str(value["price"]) == "1200.50"

    def test_an_exponent_beyond_decimal_is_malformed_json_not_a_crash(self, api, alice):
        body = (
            json.dumps(auth_body())[:-1]
            + ', "clientData": {"totalWager": 1e999999999999999999999}}'
        )

        fields = refused_fields(post(api, alice, AUTH, body.encode()))

        assert fields == {"body": "Malformed JSON: Number out of range: 1e999999999999999999999"}

    def test_an_integer_of_400_digits_is_refused_by_its_field(self, api, alice):
        body = json.dumps(auth_body(clientData={"kycLevel": 10**400}))

        assert list(refused_fields(post(api, alice, AUTH, body.encode()))) == [
            "clientData.kycLevel"
        ]

    @pytest.mark.parametrize("level", ["2.0", "2e0", "20e-1", "0.2E+1", "2.000"])
    def test_a_number_with_a_zero_fraction_is_that_integer(self, api, alice, level):
        # The OpenAPI 3.1 document's integer is JSON Schema 2020-12's: 2.0 is the integer 2.
        body = json.dumps(auth_body(clientData={"kycLevel": 0}))
        body = body.replace('"kycLevel": 0', f'"kycLevel": {level}')

        response = post(api, alice, AUTH, body.encode())

        assert response.status_code == 200, response.content
        assert Client.objects.get().kyc_level == 2

    @pytest.mark.parametrize(
        ("level", "reason"),
        [
            ("2.5", "A valid integer is required."),
            ("1e-999999999", "A valid integer is required."),
            ("1e400", "Ensure this value is less than or equal to 3."),
            # Refused as they are, never expanded into a billion digits.
            ("1e999999999", "A valid integer is required."),
            ("1E+999999999999", "A valid integer is required."),
        ],
    )
    def test_a_fraction_or_a_huge_number_is_refused_by_its_field(self, api, alice, level, reason):
        body = json.dumps(auth_body(clientData={"kycLevel": 0}))
        body = body.replace('"kycLevel": 0', f'"kycLevel": {level}')

        assert refused_fields(post(api, alice, AUTH, body.encode())) == {
            "clientData.kycLevel": reason
        }
        assert Client.objects.count() == 0


class TestUnstorableText:
    @pytest.mark.parametrize(
        ("body", "field"),
        [
            (b'{"status": "a\\u0000b"}', "status"),
            (b'{"status": "\\ud800"}', "status"),
            (b'{"status": "\\udc00\\ud800"}', "status"),  # a pair in the wrong order
            (b'{"\\ud800": "online"}', "body"),
            (b'{"status": "online", "a\\u0000": 1}', "body"),
            (b'"\\u0000"', "body"),
        ],
    )
    def test_nul_and_lone_surrogates_are_refused_where_they_are(self, api, alice, body, field):
        response = post(api, alice, "/sandbox/bots", body)

        assert refused_fields(response) == {field: UNSTORABLE}

    def test_the_path_names_the_string_at_any_depth(self, api, alice):
        body = json.dumps(auth_body(clientData={"kycHash": "x\u0000"})).encode()

        assert refused_fields(post(api, alice, AUTH, body)) == {"clientData.kycHash": UNSTORABLE}
        assert Client.objects.count() == 0

    def test_a_property_name_is_reported_by_its_object(self):
        with pytest.raises(BodyRefusedError) as refused:
            json_body_loads(b'{"items": [{"ok": 1}, {"\\ud800": 1}]}')

        assert refused.value.field == "items.1"

    def test_encoded_surrogates_are_not_utf8(self, api, alice):
        response = post(api, alice, "/sandbox/bots", b'{"status": "\xed\xa0\x80"}')

        assert refused_fields(response) == {"body": "The body is not UTF-8 text."}

    def test_surrogate_pairs_and_other_text_are_kept(self):
        value = json_body_loads(b'{"a": "\\ud83d\\ude00 caf\\u00e9 \\\\u0000", "b": "\xc3\xa9"}')

        assert value == {"a": "\U0001f600 café \\u0000", "b": "é"}

    def test_a_utf8_byte_order_mark_is_accepted_as_before(self):
        assert json_body_loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
