"""OpenAPI generation: every body in its envelope, and every error each endpoint can give."""

from collections import defaultdict
from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema

from config.api.views import ApiView
from core.errors import CATALOG, ErrorSpec

# Every endpoint can answer these, whatever it does.
GENERIC_ERRORS = (
    "VALIDATION_FAILED",
    "METHOD_NOT_ALLOWED",
    "INTERNAL_ERROR",
    "SERVICE_UNAVAILABLE",
    "SYSTEM_MAINTENANCE",
)
BODY_ERRORS = ("UNSUPPORTED_MEDIA_TYPE",)


def _error_schema(specs: list[ErrorSpec]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["requestId", "success", "error"],
        "properties": {
            "requestId": {"type": "string", "format": "uuid"},
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
            "requestId": {"type": "string", "format": "uuid"},
            "success": {"type": "boolean", "enum": [True]},
            "data": data,
        },
    }


class EnvelopeAutoSchema(AutoSchema):
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
        responses: dict[str, Any] = super()._get_response_bodies(direction)
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
        return responses
