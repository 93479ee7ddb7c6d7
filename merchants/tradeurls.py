"""Trade URLs, a client's address on the game platform:
``https://{host}/tradeoffer/new/?partner=<1-10 digits>&token=<8 chars>``."""

import re
from functools import cache

from django.conf import settings
from django.core.validators import RegexValidator

# ``\A...\Z`` and ASCII classes: the OpenAPI document shows these patterns as ``^...$``.
PLATFORM_ID_PATTERN = re.compile(r"\A76561[0-9]{12}\Z")


@cache
def trade_url_pattern() -> re.Pattern[str]:
    host = re.escape(settings.TRADE_URL_HOST)
    return re.compile(
        rf"\Ahttps://{host}/tradeoffer/new/\?partner=([0-9]{{1,10}})&token=[A-Za-z0-9_-]{{8}}\Z"
    )


class TradeUrlValidator(RegexValidator):
    """The trade URL pattern of the configured host, read when used (the host is a setting)."""

    message = "Not a valid trade URL."

    def __init__(self) -> None:
        """Nothing compiled here: ``regex`` is the current pattern."""

    @property
    def regex(self) -> re.Pattern[str]:  # type: ignore[override]
        return trade_url_pattern()


def trade_url_platform_id(url: str) -> str | None:
    """The platform id a trade URL points at, or None when the URL does not match the pattern."""
    match = trade_url_pattern().match(url)
    if match is None:
        return None
    return str(settings.PLATFORM_ID_BASE + int(match.group(1)))
