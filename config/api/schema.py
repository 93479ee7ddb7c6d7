"""OpenAPI generation: every body in its envelope, and every error each endpoint can give."""

from collections import defaultdict
from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema

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
API_KEY_ERRORS = (
    "UNAUTHORIZED",
    "MISSING_API_KEY",
    "INVALID_API_KEY",
    "ACCOUNT_DISABLED",
    "API_KEY_IP_DENIED",
)
CLIENT_TOKEN_ERRORS = ("MISSING_BEARER", "INVALID_TOKEN")
SCOPE_ERRORS = {
    "CORE_ACCESS": ("API_KEY_SCOPE_DENIED",),
    "LEDGER_READ": ("INSUFFICIENT_SCOPE", "MERCHANT_API_KEY_REQUIRED"),
    "ANY": ("API_KEY_SCOPE_DENIED",),
}


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
        from merchants.authentication import ApiKeyAuthentication, ClientTokenAuthentication

        view = self.view
        keys: list[str] = list(GENERIC_ERRORS)
        if self.method in ("POST", "PUT", "PATCH"):
            keys += BODY_ERRORS
        authenticators = getattr(view, "authentication_classes", [])
        if ApiKeyAuthentication in authenticators:
            keys += API_KEY_ERRORS + SCOPE_ERRORS[getattr(view, "required_scope", "CORE_ACCESS")]
        if ClientTokenAuthentication in authenticators:
            keys += CLIENT_TOKEN_ERRORS
        if getattr(view, "operation", None):
            keys.append("RATE_LIMITED")
        keys += getattr(view, "errors", ())
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


def add_security_schemes(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The contract's three schemes, whether or not a generated operation uses them yet.

    drf-spectacular declares only the schemes some operation uses; the contract (section 5) also
    declares a merchant/admin JWT bearer scheme the service does not issue.
    """
    from merchants.schema import CLIENT_TOKEN_SECURITY

    schemes = result.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes.setdefault("clientToken", dict(CLIENT_TOKEN_SECURITY))
    schemes.setdefault(
        "merchantJwt",
        {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "Declared by the contract; not issued by this service.",
        },
    )
    return result
