from collections import defaultdict
from importlib import import_module

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from django.urls.resolvers import RoutePattern
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerView

from config.guides import guide_view
from config.health import HealthApi
from config.metrics import metrics_view
from config.openapi import OpenApiDocumentApi

API_ROUTES = [
    "merchants.urls",
    "merchants.verification.urls",
    "trading.urls",
    "wallet.urls",
    "crypto.urls",
    "ledger.urls",
    *(["sandbox.urls"] if settings.SANDBOX else []),
]


def by_first_segment(modules: list[str]) -> list[URLResolver]:
    """The apps' routes (each written out whole, as the contract names it) grouped under one
    include per first segment: ``auth/``, ``secure/``, ``client/``, ``v1/``, ``sandbox/``.
    Django tries a path against each include in turn; an include of ``""`` per app was entered,
    tried pattern by pattern and left with an exception, where a prefix that does not match is
    passed over at once (URL resolution was 13 % of a balance read's web CPU, bench/README.md)."""
    groups: dict[str, list[URLPattern]] = defaultdict(list)
    for module in modules:
        for route in import_module(module).urlpatterns:
            assert isinstance(route, URLPattern), f"{module}: give its routes whole"
            first, _, rest = str(route.pattern).partition("/")
            pattern = RoutePattern(rest, name=route.name, is_endpoint=True)
            groups[first].append(
                URLPattern(pattern, route.callback, route.default_args, route.name)
            )
    return [path(f"{first}/", include(routes)) for first, routes in groups.items()]


urlpatterns = [
    path("health", HealthApi.as_view(), name="health"),
    path("metrics", metrics_view, name="metrics"),
    path("openapi.json", OpenApiDocumentApi.as_view(), name="openapi"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="openapi"), name="docs"),
    # APPEND_SLASH is off (API paths are exact), so the one page people type without it is sent on.
    path("docs/<slug:slug>", guide_view, name="guide"),
    path("docs", RedirectView.as_view(pattern_name="docs", permanent=True, query_string=True)),
    path("admin/", admin.site.urls),
    *by_first_segment(API_ROUTES),
]

handler400 = "core.api.middleware.bad_request"
handler403 = "core.api.middleware.permission_denied"
handler404 = "core.api.middleware.not_found"
handler500 = "core.api.middleware.server_error"
