"""The merchant API's security schemes in the OpenAPI: the authentication extensions, and the
postprocessing hook (``SPECTACULAR_SETTINGS``) that declares the contract's three schemes."""

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


def add_security_schemes(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The contract's three schemes, whether or not a generated operation uses them yet.

    drf-spectacular declares only the schemes some operation uses; the contract (section 5) also
    declares a merchant/admin JWT bearer scheme the service does not issue.
    """
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
