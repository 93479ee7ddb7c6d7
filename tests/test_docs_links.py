"""The README and docs/ read from a clone alone: every relative link points at a file of the
project, and none leaves it for the shared folder the project was written beside."""

import re
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "bench" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_point_at_files_of_the_project(page: Path):
    # A path from the root ("/docs/") is a page the service serves: tests/test_docs_guides.py.
    targets = [
        t.split("#")[0] for t in LINK.findall(page.read_text()) if "://" not in t and t[0] != "/"
    ]
    missing = [t for t in targets if t and not (page.parent / t).resolve().exists()]
    leaving = [t for t in targets if t and ROOT not in (page.parent / t).resolve().parents]

    assert missing == []
    assert leaving == []


def test_the_contract_is_named_from_inside_the_project():
    pages = [page.read_text() for page in PAGES]

    assert not [page for page in pages if "shared/spec" in page]
    assert "docs/spec/trading-service-api.md" in (ROOT / "README.md").read_text()
