"""Trade URLs, a client's address on the game platform:
``https://{host}/tradeoffer/new/?partner=<1-10 digits>&token=<8 chars>``."""

import re
from functools import cache

from django.conf import settings

PLATFORM_ID_PATTERN = re.compile(r"^76561\d{12}\Z", re.ASCII)


@cache
def trade_url_pattern() -> re.Pattern[str]:
    host = re.escape(settings.TRADE_URL_HOST)
    return re.compile(
        rf"^https://{host}/tradeoffer/new/\?partner=(\d{{1,10}})&token=[A-Za-z0-9_-]{{8}}\Z",
        re.ASCII,
    )


def trade_url_platform_id(url: str) -> str | None:
    """The platform id a trade URL points at, or None when the URL does not match the pattern."""
    match = trade_url_pattern().match(url)
    if match is None:
        return None
    return str(settings.PLATFORM_ID_BASE + int(match.group(1)))
