"""OpenAPI generation: every body in its envelope, each response shape a named component, the
input a view parses, every error each endpoint can give with an example of each, and what the view
tells integrators (``ApiView.doc``: summary, description, examples; its rate limit)."""

from collections import defaultdict
from typing import Any, Literal, is_typeddict

from drf_spectacular.drainage import warn
from drf_spectacular.openapi import AutoSchema
from rest_framework.exceptions import ValidationError
from typing_extensions import TypeAliasType

# The serializer fields' own schemas: drf-spectacular uses an extension once it is imported.
from core.api import schema_fields  # noqa: F401
from core.api.docs import OperationDoc
from core.api.exceptions import as_domain_error
from core.api.middleware import NOT_TEXT
from core.api.schema_envelope import (
    IDEMPOTENCY_HEADERS,
    IDEMPOTENCY_KEY_PARAMETER,
    REQUEST_ID_HEADER,
    error_schema,
    success_description,
    success_schema,
)
from core.api.schema_examples import error_examples, success_example
from core.api.schema_shapes import is_shape, shape_schema
from core.api.serializers import StrictSerializer, UniqueListField, parse
from core.api.views import ApiView
from core.errors import CATALOG, DomainError, ErrorSpec, validation_error

# Every endpoint can answer these, whatever it does.
GENERIC_ERRORS = (
    "VALIDATION_FAILED",
    "METHOD_NOT_ALLOWED",
    "INTERNAL_ERROR",
    "SERVICE_UNAVAILABLE",
    "SYSTEM_MAINTENANCE",
)
BODY_ERRORS = ("UNSUPPORTED_MEDIA_TYPE",)
IDEMPOTENCY_ERRORS = ("IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED")

# A path segment: no NUL (refused before routing), and short enough for the URL limit.
PATH_SEGMENT = {"pattern": r"^[^\u0000]*$", "minLength": 1, "maxLength": 256}


def _refused(serializer: Any, candidates: tuple[Any, ...]) -> DomainError | None:
    """The VALIDATION_FAILED the serializer answers the first candidate input it refuses with."""
    for data in candidates:
        try:
            parse(serializer, data)
        except ValidationError as exc:
            return as_domain_error(exc)
    return None


class EnvelopeAutoSchema(AutoSchema):
    def operation_doc(self) -> OperationDoc | None:
        doc = self.view.doc if isinstance(self.view, ApiView) else None
        if doc is None:
            warn(f"{type(self.view).__name__} declares no OperationDoc (ApiView.doc)")
        return doc

    def get_summary(self) -> str | None:
        doc = self.operation_doc()
        return doc.summary if doc else None

    def get_description(self) -> str:  # type: ignore[override]
        """The view's ``doc`` and who may call (the rate limit is added once every operation is
        known, ``rate_limit_descriptions``). Never a docstring: those speak to developers."""
        doc = self.operation_doc()
        if doc is None or not isinstance(self.view, ApiView):
            return ""
        return f"{doc.markdown}\n\n**Authentication:** {self.view.documented_access()}"

    def get_extensions(self) -> dict[str, Any]:
        limit = self.view.documented_rate_limit() if isinstance(self.view, ApiView) else None
        return {"x-rateLimit": limit.as_extension()} if limit else {}

    def get_operation_id(self) -> str:
        declared = self.view.operation_id if isinstance(self.view, ApiView) else None
        return declared or str(super().get_operation_id())

    def get_override_parameters(self) -> list[Any]:
        """The view's own parameters, then the fields of the serializer that parses its query."""
        parameters = list(super().get_override_parameters())
        if isinstance(self.view, ApiView) and self.view.query_serializer is not None:
            parameters.append(self.view.query_serializer)
        return parameters

    def _get_parameters(self) -> list[dict[str, Any]]:
        """The parameters with their examples (``ApiView.doc``). An optional query parameter
        may be sent empty, meaning "not given"; a path parameter is one segment of text
        without NUL."""
        parameters: list[dict[str, Any]] = super()._get_parameters()
        doc = self.operation_doc()
        examples = dict(doc.parameters) if doc else {}
        for parameter in parameters:
            if parameter["name"] in examples:
                parameter["example"] = examples.pop(parameter["name"])
            schema = parameter.get("schema", {})
            if parameter["in"] == "query" and not parameter.get("required"):
                parameter["allowEmptyValue"] = True
            elif parameter["in"] == "path" and not {"enum", "pattern"} & set(schema):
                parameter["schema"] = {**PATH_SEGMENT, **schema}
        for name in examples:
            warn(f"{type(self.view).__name__}: example of an undocumented parameter {name!r}")
        if self.takes_idempotency_key():
            parameters.append(dict(IDEMPOTENCY_KEY_PARAMETER))
        return parameters

    def takes_idempotency_key(self) -> bool:
        return (
            self.method == "POST" and isinstance(self.view, ApiView) and self.view.idempotent_posts
        )

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        """A request body takes no property it does not declare, and matches the schema of
        each rule across its fields (``StrictSerializer.rules``)."""
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictSerializer):
            schema["additionalProperties"] = False
            rules = [rule.schema() for rule in serializer.rules]
            if rules:
                schema["allOf"] = rules
        return schema

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, UniqueListField):
            schema["uniqueItems"] = True
        return schema

    def get_request_serializer(self) -> Any:
        if isinstance(self.view, ApiView):
            return self.view.body_serializer
        return super().get_request_serializer()

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        body: dict[str, Any] | None = super()._get_request_body(direction)
        doc = self.operation_doc()
        example = doc.request if doc else None
        if body is not None and example is None:
            warn(f"{type(self.view).__name__}: no example of the request body (doc.request)")
        if body is None and example is not None:
            warn(f"{type(self.view).__name__}: an example body for an operation without one")
        for media in (body or {}).get("content", {}).values():
            media["example"] = example
        return body

    def _get_response_for_code(
        self,
        serializer: Any,
        status_code: str,
        media_types: Any = None,
        direction: Literal["request", "response"] = "response",
    ) -> dict[str, Any]:
        if is_shape(serializer):
            # A schema given as a dict is used as it is.
            serializer = shape_schema(serializer, self.registry)
        response: dict[str, Any] = super()._get_response_for_code(
            serializer, status_code, media_types, direction
        )
        return response

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
        if self.takes_idempotency_key():
            keys += IDEMPOTENCY_ERRORS
        return list(dict.fromkeys(keys))

    def refused_input(self) -> DomainError:
        """What this operation answers a bad input with: its own serializer's refusal of an empty
        body (or of one that is not an object) or query (or of one giving each parameter "-"),
        else a path it cannot take."""
        view = self.view
        body = view.body_serializer if isinstance(view, ApiView) else None
        query = view.query_serializer if isinstance(view, ApiView) else None
        refused = (
            _refused(body, ({}, []))
            if body is not None
            else _refused(query, ({}, dict.fromkeys(query().fields, "-")))
            if query is not None
            else None
        )
        return refused or validation_error({"path": NOT_TEXT})

    def _get_response_bodies(
        self, direction: Literal["request", "response"] = "response"
    ) -> dict[str, Any]:
        declared = self.get_response_serializers()
        responses: dict[str, Any] = (
            # drf-spectacular takes a shape for an unknown object unless inside ``list[...]``.
            {"200": self._get_response_for_code(declared, "200", direction=direction)}
            if is_typeddict(declared) or isinstance(declared, TypeAliasType)
            else super()._get_response_bodies(direction)
        )
        doc = self.operation_doc()
        if doc is not None and doc.response is None:
            warn(f"{type(self.view).__name__}: no example of the answer (doc.response)")
        for response in responses.values():
            for media in response.get("content", {}).values():
                response["description"] = success_description(media.get("schema", {}))
                media["schema"] = success_schema(media.get("schema", {}))
                if doc is not None and doc.response is not None:
                    media["example"] = success_example(doc.response)
        by_status: dict[int, list[ErrorSpec]] = defaultdict(list)
        errors = self.endpoint_errors()
        for key in errors:
            spec = CATALOG[key]
            by_status[spec.status].append(spec)
        refused_input = self.refused_input()
        details = dict(doc.error_details) if doc else {}
        for key in set(details) - set(errors):
            warn(f"{type(self.view).__name__}: details of an error it does not declare: {key}")
        for status, specs in sorted(by_status.items()):
            responses[str(status)] = {
                "description": "; ".join(f"{s.code} {s.key}: {s.message}" for s in specs),
                "content": {
                    "application/json": {
                        "schema": error_schema(specs),
                        "examples": error_examples(specs, refused_input, details),
                    }
                },
            }
        idempotent = IDEMPOTENCY_HEADERS if self.takes_idempotency_key() else {}
        for response in responses.values():
            response["headers"] = {**response.get("headers", {}), **REQUEST_ID_HEADER, **idempotent}
        return responses
