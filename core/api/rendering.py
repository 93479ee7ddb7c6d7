"""JSON in and out: Decimal-preserving parsing and the response envelope (the formatting itself is
``core.json``)."""

from collections.abc import Iterable, Mapping
from typing import IO, Any

from django.conf import settings
from django.http import HttpResponse
from rest_framework.exceptions import ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from core.api.jsonbody import BodyRefusedError, json_body_loads
from core.context import current_request_id
from core.errors import validation_error
from core.json import dumps


def envelope(payload: Any, *, success: bool) -> dict[str, Any]:
    body_key = "data" if success else "error"
    return {"requestId": current_request_id(), "success": success, body_key: payload}


class EnvelopeRenderer(BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        response = (renderer_context or {}).get("response")
        success = response is None or response.status_code < 400
        return dumps(envelope(data, success=success))


class DecimalJSONParser(BaseParser):
    """Numbers with a fraction become Decimal at the edge, so money never passes through float;
    hostile bodies are refused before they can hurt (core/api/jsonbody.py)."""

    media_type = "application/json"

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        # DRF reads the request stream itself, past Django's DATA_UPLOAD_MAX_MEMORY_SIZE check.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise validation_error({"body": "The body is too large."})
        try:
            return json_body_loads(raw)
        except BodyRefusedError as exc:
            raise validation_error({exc.field: exc.reason}) from exc
        except ValueError as exc:
            raise ParseError(str(exc)) from exc


class JSONOnlyNegotiation(DefaultContentNegotiation):
    """Every API response is JSON whatever the Accept header says; no 406 surprises."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def envelope_response(
    error_body: Mapping[str, Any], status: int, headers: Mapping[str, str] | None = None
) -> HttpResponse:
    """The error envelope outside DRF views (middleware, URL-level 404, crashes)."""
    response = HttpResponse(
        dumps(envelope(error_body, success=False)),
        status=status,
        content_type="application/json",
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


class PiecesResponse(HttpResponse):
    """A response whose body is sent as the given pieces, never joined: Django's own joins its
    content into one new bytes object per response, a copy of every byte."""

    def __init__(self, pieces: list[bytes], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._container = pieces
        self["Content-Length"] = str(sum(map(len, pieces)))


def envelope_around(data: bytes) -> HttpResponse:
    """The success envelope around ready JSON, without copying it: for bodies of megabytes kept
    in memory (the price book)."""
    closed = dumps(envelope(None, success=True))
    return PiecesResponse([closed[: -len(b"null}")], data, b"}"], content_type="application/json")
