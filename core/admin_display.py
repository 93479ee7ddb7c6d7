"""The staff console's shared pieces: JSON for people (indented, escaped, in a ``<pre>``; Django
shows a read-only JSON field on one line and edits it in a one-line dump, these replace both)
and the read-only page and inline every app's console uses."""

import json
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

INDENT = 2


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


class ReadOnlyInline(admin.TabularInline):
    """The rows of a record shown on its page (a transfer's postings, an event's deliveries),
    never added, edited or deleted there."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
