from collections.abc import Iterator

import pytest

from tests.hostile.server import Server, serving


@pytest.fixture(scope="package")
def server(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for every hostile-input test (the database is emptied under it between them)."""
    with serving(tmp_path_factory.mktemp("hostile") / "web.log") as up:
        yield up
