"""The API: Django REST framework, the OpenAPI document (drf-spectacular), client tokens and
how merchants' callbacks are reached."""

from config.settings.environment import env_bool, env_int
from config.settings.security import NUM_PROXIES
from core.api import docs

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["core.api.rendering.EnvelopeRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.rendering.DecimalJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.api.rendering.JSONOnlyNegotiation",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_THROTTLE_CLASSES": [],
    "EXCEPTION_HANDLER": "core.api.exceptions.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.EnvelopeAutoSchema",
    "UNAUTHENTICATED_USER": None,
    "NUM_PROXIES": NUM_PROXIES,
    "COERCE_DECIMAL_TO_STRING": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Trading Service API",
    "DESCRIPTION": docs.API_DESCRIPTION,
    "VERSION": "0.8.3",
    # 3.1: its schemas are JSON Schema 2020-12 and it has `webhooks` (docs/decisions.md,
    # "OpenAPI 3.1").
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {},
    # Our choices are their own labels: "* `730` - 730" would only repeat the enum.
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "APPEND_COMPONENTS": {},
    # Descriptions come from each view's ``doc`` (core/api/docs.py); docstrings speak to
    # developers and never reach the document.
    "DISABLE_DOCSTRING_DESCRIPTIONS": True,
    "POSTPROCESSING_HOOKS": [
        "merchants.schema.add_security_schemes",
        "core.api.schema_rate_limits.rate_limit_descriptions",
        "config.openapi_webhooks.add_webhooks",
    ],
}

CLIENT_TOKEN_TTL_SECONDS = 24 * 3600

# Merchants' callback URLs: outside the sandbox they must be https on public addresses; this lets
# http and private or loopback receivers through (a staging receiver on a private network, an
# end-to-end check on one machine). ``manage.py check --deploy`` warns while it is on.
CALLBACK_ALLOW_PRIVATE_NETWORKS = env_bool("CALLBACK_ALLOW_PRIVATE_NETWORKS", False)
# One merchant's webhook and approval deliveries in flight at once, service-wide: the share of the
# workers a merchant whose receiver is slow can hold (each attempt ends within 10 s). More wait,
# due, for one of them to end (docs/decisions.md, "One merchant's share of the workers").
WEBHOOK_DELIVERIES_PER_MERCHANT = env_int("WEBHOOK_DELIVERIES_PER_MERCHANT", 2)
