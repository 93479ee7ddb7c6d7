"""``GET /metrics``: this machine's metrics (core.metrics) for a Prometheus that sends the
configured token (``Authorization: Bearer <METRICS_TOKEN>``). Without a token configured the
route answers 404 (serve them with ``manage.py metrics_server`` on a private port instead); a
missing or wrong token is refused in the error envelope. ``METRICS_TOKEN`` may name two tokens,
comma-separated, while Prometheus moves from one to the other (docs/ops/rotation.md)."""

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST

from core.api.exceptions import error_response
from core.errors import DomainError
from core.metrics import metrics_exposition


def metrics_view(request: HttpRequest) -> HttpResponse:
    tokens = [t.strip().encode() for t in settings.METRICS_TOKEN.split(",") if t.strip()]
    if not tokens:
        return error_response(DomainError("NOT_FOUND"))
    if request.method not in ("GET", "HEAD"):
        return error_response(DomainError("METHOD_NOT_ALLOWED"))
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if not header:
        return error_response(DomainError("MISSING_BEARER"))
    scheme, _, sent = header.partition(" ")
    # Each token compared, in constant time: which one matched takes no longer to find.
    matches = [hmac.compare_digest(sent.strip().encode(), token) for token in tokens]
    if scheme.lower() != "bearer" or not any(matches):
        return error_response(DomainError("INVALID_TOKEN", "The metrics token is not valid."))
    return HttpResponse(metrics_exposition(), content_type=CONTENT_TYPE_LATEST)
