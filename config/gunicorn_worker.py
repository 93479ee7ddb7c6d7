"""gunicorn's thread worker, answering every request gunicorn refuses before the application sees
it (a request line or headers over its limits or malformed, an unknown method or HTTP version,
obsolete header folding, contradicting forwarded headers, a malformed chunked body) with the
API's error envelope, VALIDATION_FAILED naming the part, instead of gunicorn's HTML page."""

import socket
from http import HTTPStatus
from typing import Any

from gunicorn import util
from gunicorn.http import errors
from gunicorn.workers.gthread import ThreadWorker

from core.context import end_request, start_request
from core.errors import validation_error
from core.json import dumps

# gunicorn's refusals of what a client sent, most specific first: the field named in the
# envelope, and why. Every ParseException but the two about our own answers (an application
# error, answered 500 by gunicorn) and a configuration problem (ours, not the client's) is one.
REFUSALS: tuple[tuple[type[Exception] | tuple[type[Exception], ...], str, str], ...] = (
    (errors.LimitRequestLine, "url", "The URL is too long."),
    (errors.InvalidRequestMethod, "method", "Not an HTTP method (methods are upper case)."),
    (errors.InvalidHTTPVersion, "httpVersion", "Only HTTP/1.0 and HTTP/1.1 are served."),
    (errors.InvalidH2CPreface, "httpVersion", "Only HTTP/1.0 and HTTP/1.1 are served."),
    (errors.InvalidRequestLine, "url", "The request line is malformed."),
    (errors.LimitRequestHeaders, "headers", "The headers are too large."),
    (errors.ObsoleteFolding, "headers", "A header is folded over lines (obsolete)."),
    (errors.InvalidSchemeHeaders, "headers", "The forwarded scheme headers contradict."),
    (errors.InvalidHeaderName, "headers", "A header name is malformed."),
    (errors.InvalidHeader, "headers", "A header is malformed."),
    (errors.UnsupportedTransferCoding, "headers", "The transfer coding is not supported."),
    (errors.ExpectationFailed, "headers", "The expectation cannot be met."),
    (
        (errors.InvalidProxyLine, errors.InvalidProxyHeader, errors.ForbiddenProxyRequest),
        "headers",
        "The proxy protocol header is malformed or not allowed.",
    ),
    (
        (errors.InvalidChunkSize, errors.ChunkMissingTerminator, errors.InvalidChunkExtension),
        "body",
        "The chunked body is malformed.",
    ),
)
NOT_THE_CLIENTS = (
    errors.InvalidResponseHeader,
    errors.InvalidResponseHeaderName,
    errors.ConfigurationProblem,
)


def refusal_response(field: str, reason: str) -> bytes:
    """A whole HTTP response: the VALIDATION_FAILED envelope, and the connection closed."""
    # Django is set up in a worker only once it has loaded the application, after this module.
    from core.api.exceptions import error_body
    from core.api.rendering import envelope

    request_id = start_request()
    try:
        error = validation_error({field: reason})
        body = dumps(envelope(error_body(error), success=False))
    finally:
        end_request()
    head = (
        f"HTTP/1.1 {error.spec.status} {HTTPStatus(error.spec.status).phrase}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-Id: {request_id}\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


class EnvelopeThreadWorker(ThreadWorker):
    def handle_error(self, req: Any, client: socket.socket, addr: Any, exc: Exception) -> None:
        refusal = (
            None
            if isinstance(exc, NOT_THE_CLIENTS)
            else next(
                ((field, reason) for kind, field, reason in REFUSALS if isinstance(exc, kind)),
                None,
            )
        )
        if refusal is None:
            super().handle_error(req, client, addr, exc)
            return
        self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        try:
            util.write_nonblock(client, refusal_response(*refusal))
        except OSError:
            self.log.debug("Failed to send error message.")
