"""The guides (``core.api.docs.GUIDES``: docs/*.md) served as pages at ``/docs/<slug>``, beside
the API reference at ``/docs/`` that links to them: the Markdown the repository keeps, rendered
once per process.

Raw HTML in the Markdown is escaped, not passed through (nothing a merchant sends is rendered
here, but a page should not depend on that). Headings get GitHub's anchors, so a link written
for the repository (``webhooks.md#verifying-the-signature``) lands on the same heading; a link
to another guide's file becomes a link to its page. ``tests/test_docs_guides.py`` follows every
link of every page.
"""

import re
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.api.docs import GUIDES, Guide

BY_SLUG = {guide.slug: guide for guide in GUIDES}
BY_FILE = {guide.file: guide for guide in GUIDES}
# CommonMark with GitHub's tables; ``html: False`` renders raw HTML as text.
MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
# What GitHub drops from a heading's text to make its anchor.
NOT_IN_ANCHOR = re.compile(r"[^\w\- ]")


def heading_anchor(text: str, taken: dict[str, int]) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; the
    second heading of the same text gets ``-1``, the third ``-2``."""
    anchor = NOT_IN_ANCHOR.sub("", text.strip().lower()).replace(" ", "-")
    count = taken.get(anchor, 0)
    taken[anchor] = count + 1
    return f"{anchor}-{count}" if count else anchor


def guide_href(href: str) -> str:
    """A link as the page serves it: another guide's file becomes that guide's page."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path:
        return href
    guide = BY_FILE.get(parts.path.removeprefix("./"))
    if guide is None:
        return href
    return guide.slug + (f"#{parts.fragment}" if parts.fragment else "")


def _inline_text(token: Token) -> str:
    return "".join(child.content for child in token.children or [])


def _rewritten(tokens: list[Token]) -> list[Token]:
    taken: dict[str, int] = {}
    for position, token in enumerate(tokens):
        if token.type == "heading_open":
            token.attrSet("id", heading_anchor(_inline_text(tokens[position + 1]), taken))
        for child in token.children or []:
            if child.type == "link_open":
                child.attrSet("href", guide_href(str(child.attrGet("href") or "")))
    return tokens


def markdown_html(text: str) -> str:
    """The page's body from Markdown: raw HTML escaped, anchors on headings, guides linked."""
    env: dict[str, Any] = {}
    tokens = _rewritten(MARKDOWN.parse(text, env))
    return str(MARKDOWN.renderer.render(tokens, MARKDOWN.options, env))


@cache
def guide_page(slug: str) -> bytes:
    """The whole page of one guide, rendered once per process (the files change only with a
    deploy)."""
    guide: Guide = BY_SLUG[slug]
    text = (settings.BASE_DIR / "docs" / guide.file).read_text()
    return render_to_string(
        "docs/guide.html",
        {"guide": guide, "guides": GUIDES, "body": markdown_html(text)},
    ).encode()


def guide_view(request: HttpRequest, slug: str) -> HttpResponse:
    if slug not in BY_SLUG:
        raise Http404(slug)
    return HttpResponse(guide_page(slug), content_type="text/html; charset=utf-8")
