from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "merchants.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "apiKey", "in": "header", "name": "api-key"}


CLIENT_TOKEN_SECURITY: dict[str, Any] = {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "JWT",
    "description": "The client token; the `Bearer ` prefix is optional.",
}


class ClientTokenScheme(OpenApiAuthenticationExtension):
    target_class = "merchants.authentication.ClientTokenAuthentication"
    name = "clientToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return dict(CLIENT_TOKEN_SECURITY)
