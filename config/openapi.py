"""``GET /openapi.json``: the OpenAPI document, built once per process and served as bytes,
gzip-compressed when the client takes it, with an ETag, and limited per address.

The document is several megabytes and drf-spectacular took seconds of CPU to build it on every
request: 16 parallel fetches, with no credentials, held an authenticated balance read for 2.8 s.
It depends only on the code and the settings, so each process builds it once (the first request,
or gunicorn's worker start, ``config/gunicorn.py``) while the others wait for that one build."""

import gzip
import hashlib
import threading
from dataclasses import dataclass

from django.http import HttpResponse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from core.api.views import ApiView
from core.errors import DomainError
from merchants.authentication import request_ip
from merchants.ratelimits import Limited, per_minute, rate_limit_hit

# Not a merchant's: per caller address, whoever calls.
RATE_LIMIT = Limited("public.openapi", per_minute(60, 60))


@dataclass(frozen=True)
class BuiltDocument:
    body: bytes
    gzipped: bytes
    etag: str


_built: list[BuiltDocument] = []
_building = threading.Lock()


def openapi_document() -> BuiltDocument:
    """The document of this process, built by the first caller; the others wait for it."""
    with _building:
        if not _built:
            schema = SchemaGenerator().get_schema(request=None, public=True)
            body = OpenApiJsonRenderer().render(schema, renderer_context={})
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            _built.append(BuiltDocument(body, gzip.compress(body, compresslevel=9, mtime=0), etag))
    return _built[0]


class OpenApiDocumentApi(ApiView):
    """The document, outside the envelope (its refusals, the address's limit, in it)."""

    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    errors = ("RATE_LIMITED",)

    @extend_schema(exclude=True)
    def get(self, request: Request) -> HttpResponse:
        state = rate_limit_hit(
            merchant_id=f"address:{request_ip(request)}", verified=False, limited=RATE_LIMIT
        )
        if not state.allowed:
            raise DomainError("RATE_LIMITED", retry_after=state.retry_after)
        built = openapi_document()
        headers = {"ETag": built.etag, "Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
        if built.etag in _etags(request.headers.get("If-None-Match", "")):
            return HttpResponse(status=304, headers=headers)
        gzipped = "gzip" in request.headers.get("Accept-Encoding", "")
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        body = built.gzipped if gzipped else built.body
        return HttpResponse(body, content_type="application/json", headers=headers)


def _etags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in header.split(",")}
