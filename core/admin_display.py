"""JSON in the staff console, for people: indented, escaped, in a ``<pre>``. Django shows a
read-only JSON field on one line and edits it in a one-line dump; these replace both."""

import json
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
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
