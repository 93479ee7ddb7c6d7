"""The base of every API view: the input it parses, the errors it documents beyond the generic
ones, and what the OpenAPI document tells integrators about it."""

from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from config.api.docs import OperationDoc, RateLimitDoc
from config.api.serializers import parse, serializer_fields
from core.errors import validation_error


# What a view declares here is both what it does and what the OpenAPI says it does
# (``config.api.schema.EnvelopeAutoSchema`` reads it): the serializer that parses its query string
# or body, its operation id, its errors, its documentation. (No docstring: docstrings never become
# descriptions, ``DISABLE_DOCSTRING_DESCRIPTIONS``; ``doc`` does.)
class ApiView(APIView):
    #: Parses the query string (``parse_query``); its fields are the documented parameters.
    query_serializer: ClassVar[type[Serializer] | None] = None
    #: Parses the JSON body (``parse_body``); documented as the request body.
    body_serializer: ClassVar[type[Serializer] | None] = None
    #: The OpenAPI operation id, when a subclass (one route of a pair) gives it.
    operation_id: ClassVar[str | None] = None
    #: Catalog keys this endpoint can answer with beyond the generic ones (for the OpenAPI).
    errors: ClassVar[tuple[str, ...]] = ()
    #: The operation's summary, description and examples in the OpenAPI document.
    doc: ClassVar[OperationDoc | None] = None
    #: The view reads the maintenance switch itself; ``MaintenanceMiddleware`` then does not.
    checks_maintenance: ClassVar[bool] = False
    #: Its POSTs take an ``Idempotency-Key`` (``config.api.idempotency``; documented per POST).
    idempotent_posts: ClassVar[bool] = False

    def parse_query(self, request: Request) -> Any:
        """A parameter the serializer reads may be given once (the document has no arrays in
        query strings); others are ignored."""
        assert self.query_serializer is not None
        names = [str(name) for name in serializer_fields(self.query_serializer)]
        repeated = {
            name: "Give this parameter once."
            for name in names
            if len(request.query_params.getlist(name)) > 1
        }
        if repeated:
            raise validation_error(repeated)
        return parse(self.query_serializer, request.query_params)

    def parse_body(self, request: Request) -> Any:
        assert self.body_serializer is not None
        return parse(self.body_serializer, request.data)

    def declared_errors(self) -> tuple[str, ...]:
        """What the OpenAPI lists for this endpoint besides the generic errors and those of its
        authentication classes (their ``errors``)."""
        return self.errors

    def documented_access(self) -> str:
        """Who may call, as the operation's description says it."""
        return "none: anyone may call."

    def documented_rate_limit(self) -> RateLimitDoc | None:
        """The budget this endpoint spends, for the OpenAPI; None: not rate limited."""
        return None
