"""The staff console's shared pieces: JSON for people (indented, escaped, in a ``<pre>``; Django
shows a read-only JSON field on one line and edits it in a one-line dump, these replace both),
times for people (real time, with the service clock beside it where the sandbox moved it), and
the read-only page and inline every app's console uses."""

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.core.paginator import Paginator
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models
from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.clock import ClockShifts, clock_shifts
from core.context import request_memo

INDENT = 2
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def json_block(value: Any) -> SafeString | None:
    """``value`` indented in a ``<pre class="json">``, every character escaped; None (the admin's
    empty mark) when there is nothing."""
    if value is None:
        return None
    shown = json.dumps(value, indent=INDENT, ensure_ascii=False, cls=DjangoJSONEncoder)
    return format_html('<pre class="json">{}</pre>', shown)


def json_readonly(field: str, description: str | None = None) -> Callable[[Any, Any], Any]:
    """A read-only admin field showing the JSON field ``field`` as a block; assign it on the
    admin class as ``<field>_json`` (``readable_fields`` names it so)."""

    @admin.display(description=description or field.replace("_", " "))
    def show(model_admin: Any, obj: Any) -> SafeString | None:
        return json_block(getattr(obj, field))

    return show


def readable_fields(model: type[models.Model]) -> tuple[str, ...]:
    """Every field of ``model`` to show read-only, each JSON field as its ``<name>_json`` block."""
    return tuple(
        f"{f.name}_json" if isinstance(f, models.JSONField) else f.name for f in model._meta.fields
    )


def console_shifts() -> ClockShifts:
    """The sandbox's moves of the clock, read once per request."""
    return request_memo("console-clock-shifts", clock_shifts)


def duration(span: timedelta) -> str:
    """A span as staff say it: "2 d 3 h 5 min", "40 min", "under a minute"."""
    minutes = int(span.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{minutes} min"]
    return " ".join(part for part in parts if part and part != "0 min") or "under a minute"


def console_time(value: datetime | None) -> SafeString | None:
    """A time the service stamped (on its clock), as staff read it: the real time, and in the
    sandbox, where the clock may run ahead, the service clock's reading beside it. None (the
    admin's empty mark) for no time."""
    if value is None:
        return None
    real = console_shifts().real(value)
    local, service = timezone.localtime(real), timezone.localtime(value)
    shown = format_html(
        '<time class="console-time" datetime="{}">{}</time>',
        real.isoformat(),
        local.strftime(TIME_FORMAT),
    )
    if service == local:
        return shown
    same_day = service.date() == local.date()
    return format_html(
        '{} <span class="service-clock" title="The service clock, {} ahead of real time">'
        "service clock {}</span>",
        shown,
        duration(service - local),
        service.strftime("%H:%M:%S" if same_day else TIME_FORMAT),
    )


def console_age(value: datetime | None, now: datetime | None = None) -> str:
    """How long ago the service stamped ``value``, in real time ("3 h 12 min")."""
    if value is None:
        return ""
    elapsed = (now or timezone.now()) - console_shifts().real(value)
    if elapsed < timedelta(minutes=1):
        return f"{max(0, int(elapsed.total_seconds()))} s"
    return duration(elapsed)


class IndentedJSONField(forms.JSONField):
    """A JSON form field whose text area shows the stored value indented."""

    widget = forms.Textarea(attrs={"class": "vLargeTextField json", "rows": 12})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, indent=INDENT, ensure_ascii=False, cls=self.encoder)


class ReadOnlyAdmin(admin.ModelAdmin):
    """A page staff read and never add to, edit or delete from: its rows change only through
    the services. A JSON field it shows as a form field is indented (list ``<field>_json`` from
    ``json_readonly`` to show it as a block). Its actions that decide something
    (``permissions=["decide"]``) need the model's change permission, not just the right to look."""

    formfield_overrides = {models.JSONField: {"form_class": IndentedJSONField}}

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_decide_permission(self, request: HttpRequest) -> bool:
        codename = get_permission_codename("change", self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")


class EstimatedCountPaginator(Paginator):
    """A list's pages counted exactly when filtered (the filters' indexes make that cheap), and
    from PostgreSQL's statistics when not: counting ten million trades exactly is a scan of
    them all, on every view of the list's first page."""

    @cached_property
    def count(self) -> int:
        query = getattr(self.object_list, "query", None)
        if query is not None and not query.where and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                    [query.model._meta.db_table],
                )
                row = cursor.fetchone()
            if row is not None and row[0] > 0:  # -1 or 0: never analyzed, count it
                return int(row[0])
        return super().count


class ReadOnlyInline(admin.TabularInline):
    """The rows of a record shown on its page (a transfer's postings, an event's deliveries),
    never added, edited or deleted there."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
