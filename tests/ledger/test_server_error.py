"""1006 SERVER_ERROR: the history could not be loaded. Provoked for real: another connection
holds the ledger table locked, so the read runs into its statement timeout."""

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection

from ledger import selectors
from tests.factories import assert_error
from tests.ledger.conftest import LIST, data, fund

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def table_locked(table: str) -> Iterator[None]:
    """``table`` locked against every read, by a second session, until the block ends."""
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        dbname=settings["NAME"],
    ) as other:
        other.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            other.rollback()


@pytest.fixture
def short_timeout(monkeypatch) -> None:
    monkeypatch.setattr(selectors, "STATEMENT_TIMEOUT_MS", 200)


@pytest.mark.usefixtures("short_timeout")
class TestHistoryUnavailable:
    def test_a_list_that_times_out_is_1006(self, api, alice):
        fund(alice)

        with table_locked("ledger_funding"):
            response = api.get(LIST, headers=alice.headers)

        assert_error(response, 400, 1006, "SERVER_ERROR")
        # Retrying once the table is free works.
        assert len(data(api.get(LIST, headers=alice.headers))["items"]) == 1

    def test_admin_rows_that_cannot_be_read_are_1006_too(self, api, alice):
        fund(alice)

        with table_locked("wallet_transfer"):
            response = api.get(LIST, headers=alice.headers)
            # Without admin rows the read does not touch the locked table.
            deposits = api.get(LIST, {"type": "DEPOSIT"}, headers=alice.headers)

        assert_error(response, 400, 1006, "SERVER_ERROR")
        assert len(data(deposits)["items"]) == 1

    def test_a_lookup_that_times_out_is_1006(self, api, alice):
        funding = fund(alice)

        with table_locked("ledger_funding"):
            response = api.get(f"{LIST}/{funding.id}", headers=alice.headers)

        assert_error(response, 400, 1006, "SERVER_ERROR")
