from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from config.health import HealthApi

urlpatterns = [
    path("health", HealthApi.as_view(), name="health"),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="openapi"), name="docs"),
    path("admin/", admin.site.urls),
    path("", include("merchants.urls")),
    path("", include("trading.urls")),
    path("", include("wallet.urls")),
    path("", include("crypto.urls")),
    path("", include("ledger.urls")),
]
if settings.SANDBOX:
    urlpatterns.append(path("", include("sandbox.urls")))

handler400 = "config.api.middleware.bad_request"
handler403 = "config.api.middleware.permission_denied"
handler404 = "config.api.middleware.not_found"
handler500 = "config.api.middleware.server_error"
