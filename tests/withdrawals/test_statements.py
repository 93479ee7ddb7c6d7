"""What one ``POST /secure/buy`` asks of PostgreSQL, counted (bench/README.md: the buy is the
write the benchmark measures against the write limit). The caller is kept from an earlier
request, as it is under load; the work handed to the worker after commit is not counted."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import trade_url
from tests.withdrawals.conftest import make_listing

pytestmark = pytest.mark.django_db

# 15 counted this way before issue 17: the caller's API key is now kept between requests, the
# wallet's two accounts are read in one statement, the trade is inserted once with its first
# sequence number (no full-row UPDATE after the INSERT), and the response renders the items
# just written (no re-read). One more since the created trade names its items (issue 14): their
# catalog rows, by primary key, in one statement. One fewer since the wallet's transfer and its
# postings are one statement (issue 32). (Inside a test the transaction's BEGIN and COMMIT are a
# SAVEPOINT and its RELEASE, counted here.)
STATEMENTS_PER_BUY = 11


def buy(api, actor, listing):  # type: ignore[no-untyped-def]
    return api.post(
        "/secure/buy",
        {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.50}]},
        format="json",
        headers=actor.headers,
    )


def test_a_secure_buy_makes_its_statements(api, alice_funded, catalog_item):
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.00")
    assert buy(api, alice_funded, first).status_code == 200  # the locked account exists now
    with CaptureQueriesContext(connection) as queries:
        response = buy(api, alice_funded, second)
    assert response.status_code == 200, response.json()
    statements = [q["sql"] for q in queries]
    assert len(statements) == STATEMENTS_PER_BUY, "\n".join(statements)
