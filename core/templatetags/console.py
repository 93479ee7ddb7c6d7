"""The console's template helpers: times as staff read them, and the sandbox clock's banner."""

from datetime import datetime, timedelta

from django import template
from django.conf import settings
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from core.admin_display import console_age, console_time, duration
from core.selectors import service_settings_get

register = template.Library()


@register.filter
def real_time(value: datetime | None) -> SafeString | str:
    """``{{ stamp|real_time }}``: real time, the service clock beside it in the sandbox."""
    return console_time(value) or ""


@register.filter
def age(value: datetime | None) -> str:
    """``{{ stamp|age }}``: how long ago, in real time."""
    return console_age(value)


@register.simple_tag
def sandbox_clock() -> SafeString | str:
    """In the sandbox, a line saying how far the service clock runs ahead and how the console
    shows times; nothing elsewhere."""
    if not settings.SANDBOX:
        return ""
    offset = service_settings_get().clock_offset_seconds
    if not offset:
        return mark_safe('<p class="sandbox-clock">Sandbox: the service clock shows real time.</p>')
    now = timezone.now()
    service = now + timedelta(seconds=offset)
    return format_html(
        '<p class="sandbox-clock">Sandbox: the service clock runs {} ahead of real time '
        "(real {}, service clock {}). Times are shown in real time, the service clock's "
        "reading beside them.</p>",
        duration(service - now),
        timezone.localtime(now).strftime("%H:%M"),
        timezone.localtime(service).strftime("%Y-%m-%d %H:%M"),
    )
