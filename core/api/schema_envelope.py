"""The envelope every answer comes in, as OpenAPI writes it: the success and error bodies, the
request id and idempotency headers, the Idempotency-Key parameter and what a success's
description says."""

from collections.abc import Mapping
from typing import Any

from core.api.docs import IDEMPOTENCY_GUIDE
from core.api.idempotency import (
    HEADER,
    KEY_RULE,
    MAX_LENGTH,
    ORIGINAL_REQUEST_HEADER,
    REPLAYED_HEADER,
)
from core.errors import ErrorSpec

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


def error_schema(specs: list[ErrorSpec]) -> dict[str, Any]:
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


def success_schema(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["requestId", "success", "data"],
        "properties": {
            "requestId": REQUEST_ID,
            "success": {"type": "boolean", "enum": [True]},
            "data": data,
        },
    }


def success_description(data: Mapping[str, Any]) -> str:
    """What a success answers, named by its shape: the envelope with ``data`` holding it."""
    return f"Done: the success envelope; its `data` is {_named(data)}."


def _named(schema: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        return f"described by `{str(schema['$ref']).rsplit('/', 1)[-1]}`"
    if schema.get("type") == "array":
        return f"a list, each entry {_named(schema.get('items', {}))}"
    return "the object below"
