"""The routed views, read from the URL configuration: where a question about every endpoint
(each one's rate-limit budget, the errors it declares) finds them, wherever their modules live."""

import re
from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest
from django.urls import URLPattern, URLResolver, get_resolver

# A path no route took (a 404, a static file): one series in the metrics, whatever was asked.
UNMATCHED = "unmatched"


def routed_views() -> Iterator[tuple[str, type]]:
    """(path template, view class) of every class-based route, ``<str:x>`` written ``{x}``."""
    yield from _routes(get_resolver().url_patterns, "/")


def _routes(patterns: list[Any], prefix: str) -> Iterator[tuple[str, type]]:
    for pattern in patterns:
        route = prefix + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            view = getattr(pattern.callback, "cls", None) or getattr(
                pattern.callback, "view_class", None
            )
            if view is not None:
                yield route, view


def request_route(request: HttpRequest) -> str:
    """The URL pattern Django resolved for an answered request (the metrics' and the access
    log's ``route``: as many as the routes, never the raw path), or ``unmatched``."""
    match = getattr(request, "resolver_match", None)
    return match.route if match is not None else UNMATCHED
