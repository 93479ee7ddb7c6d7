"""The routed views, read from the URL configuration: where a question about every endpoint
(each one's rate-limit budget, the errors it declares) finds them, wherever their modules live."""

import re
from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver


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
