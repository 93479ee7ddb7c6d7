"""The console's admin site: Django's, with the attention board as its home
(``core.apps.ConsoleAdminConfig`` makes it the default site, so every app registers on it
through ``django.contrib.admin.site`` as before)."""

from typing import Any

from django.contrib.admin import AdminSite
from django.http import HttpRequest
from django.template.response import TemplateResponse

from core.admin_board import board_build


class ConsoleSite(AdminSite):
    site_header = "Trading Service console"
    site_title = "Trading Service console"
    index_title = "What needs attention"
    # The service has no web site of its own; what staff look up beside the console is the API
    # reference (what a merchant sent, what an error code means).
    site_url = "/docs/"

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        board = board_build()
        context = {
            **(extra_context or {}),
            "board": board,
            "board_alerts": sum(part.alerts for part in board),
            "board_milliseconds": sum(part.milliseconds for part in board),
        }
        response: TemplateResponse = super().index(request, context)
        return response
