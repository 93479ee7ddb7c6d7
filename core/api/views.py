"""The base of every API view: the input it parses, the errors it documents beyond the generic
ones, and what the OpenAPI document tells integrators about it."""

from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from core.api.docs import OperationDoc, RateLimitDoc
from core.api.serializers import parse, serializer_fields
from core.errors import validation_error

# Parsed queries of the views whose parse is a value (``ApiView.query_is_value``), by view and
# query string. A query string may be some kilobytes (``MAX_URL_LENGTH``, decoded, parameters the
# serializer ignores included): at most a thousand are kept, dropped together.
_KEPT_QUERIES: dict[tuple[type, str], Any] = {}
_MAX_KEPT_QUERIES = 1_000
_NOT_KEPT = object()


# What a view declares here is both what it does and what the OpenAPI says it does
# (``core.api.schema.EnvelopeAutoSchema`` reads it): the serializer that parses its query string
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
    #: Its POSTs take an ``Idempotency-Key`` (``core.api.idempotency``; documented per POST).
    idempotent_posts: ClassVar[bool] = False
    #: What ``query_serializer`` parses is a value (immutable) that depends on nothing but the
    #: query string: a query parsed once is kept per process (``parse_query``).
    query_is_value: ClassVar[bool] = False

    def parse_query(self, request: Request) -> Any:
        """A parameter the serializer reads may be given once (the document has no arrays in
        query strings); others are ignored."""
        if not self.query_is_value:
            return self._query_parsed(request)
        # A client repeats its query call after call: DRF's run over ten fields cost a client
        # inventory read 90-125 µs. Only a query that parsed is kept; a refused one is parsed
        # (and refused) again.
        key = (type(self), request.META.get("QUERY_STRING", ""))
        parsed = _KEPT_QUERIES.get(key, _NOT_KEPT)
        if parsed is _NOT_KEPT:
            parsed = self._query_parsed(request)
            if len(_KEPT_QUERIES) >= _MAX_KEPT_QUERIES:
                _KEPT_QUERIES.clear()
            _KEPT_QUERIES[key] = parsed
        return parsed

    def _query_parsed(self, request: Request) -> Any:
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
