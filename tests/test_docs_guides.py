"""The guides served under ``/docs/`` (config/guides.py): each guide of docs/ is a page, the API
reference links every one of them, and every link on those pages resolves: to a page the service
serves (the reference, a guide) and, when it names an anchor, to a heading of that page. Raw
HTML in the Markdown is shown as text, never run."""

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from config.guides import heading_anchor, markdown_html
from core.api.docs import GUIDES

pytestmark = pytest.mark.django_db

REFERENCE = "/docs/"


class Page(HTMLParser):
    """The links (``href``) and anchors (``id``) of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "href" and tag == "a" and value is not None:
                self.links.append(value)
            if name == "id" and value:
                self.anchors.add(value)


def parsed(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def served(django_db_blocker: Any) -> dict[str, Page]:
    """Every guide's page, by path."""
    client = APIClient()
    pages = {}
    with django_db_blocker.unblock():
        for guide in GUIDES:
            answer = client.get(guide.path)
            assert answer.status_code == 200, guide.path
            assert answer["Content-Type"] == "text/html; charset=utf-8"
            pages[guide.path] = parsed(answer.content.decode())
    return pages


@pytest.fixture(scope="module")
def description(django_db_blocker: Any) -> str:
    with django_db_blocker.unblock():
        document = APIClient().get("/openapi.json").json()
    text: str = document["info"]["description"]
    return text


def test_every_guide_is_served_from_its_markdown(api):
    for guide in GUIDES:
        text = (settings.BASE_DIR / "docs" / guide.file).read_text()
        page = api.get(guide.path).content.decode()

        assert markdown_html(text) in page, guide.file
        assert f"<title>{guide.title} " in page.replace("&#x27;", "'")
        # The page's headings are the file's, with GitHub's anchors.
        taken: dict[str, int] = {}
        for line in text.splitlines():
            if line.startswith("## "):
                anchor = heading_anchor(line[3:].replace("`", ""), taken)
                assert f'id="{anchor}"' in page, (guide.file, line)


def test_the_api_reference_links_every_guide_and_no_repository(description):
    for guide in GUIDES:
        assert f"]({guide.path})" in description, guide.slug
    assert "repository" not in description


def test_every_link_on_the_guides_resolves_to_a_served_page_and_its_anchor(api, served):
    checked = 0
    for path, page in served.items():
        for href in page.links:
            target = urlsplit(urljoin(f"http://testserver{path}", href))
            if target.netloc != "testserver":
                assert target.scheme == "https", (path, href)  # out of the service: no fetch
                continue
            answer = api.get(target.path)
            assert answer.status_code == 200, (path, href)
            if target.fragment:
                anchors = served[target.path].anchors if target.path in served else set()
                assert target.fragment in anchors, (path, href)
            checked += 1

    assert checked > 50  # the navigation of each page, and the guides' own links


def test_guides_link_each_other_as_pages_not_files(served):
    for path, page in served.items():
        assert [href for href in page.links if ".md" in href] == [], path


def test_raw_html_in_markdown_is_shown_as_text():
    html = markdown_html('<script>alert(1)</script>\n\nText <b onmouseover="x()">bold</b>\n')

    assert "<script" not in html
    assert "<b " not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_links_and_anchors_are_made_as_github_makes_them():
    html = markdown_html(
        "# Receiving webhooks\n## The `test` field\n## Notes\n## Notes\n"
        "[a](webhooks.md#events) [b](./errors.md) [c](decisions.md) [d](https://x.example/y.md)\n"
    )

    assert 'id="the-test-field"' in html
    assert 'id="notes"' in html
    assert 'id="notes-1"' in html
    assert 'href="webhooks#events"' in html
    assert 'href="errors"' in html
    assert 'href="decisions.md"' in html  # not a guide: left as written (the link test fails it)
    assert 'href="https://x.example/y.md"' in html


def test_an_unknown_guide_is_the_api_not_found(api):
    answer = api.get("/docs/decisions")

    assert answer.status_code == 404
    assert answer.json()["error"]["key"] == "NOT_FOUND"
