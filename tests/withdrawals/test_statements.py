"""What one ``POST /secure/buy`` asks of PostgreSQL, counted (bench/README.md: the buy is the
write the benchmark measures against the write limit). The caller is kept from an earlier
request, as it is under load; the work handed to the worker after commit is not counted."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import trade_url
from tests.withdrawals.conftest import make_listing

pytestmark = pytest.mark.django_db

# Was 17 before the per-request path was made lean (issue 17).
STATEMENTS_PER_BUY = 17


def test_a_secure_buy_makes_its_statements(api, alice_funded, catalog_item):
    listing = make_listing(catalog_item, "10.00")
    assert api.get("/sandbox/clock", headers=alice_funded.headers).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        response = api.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.50}]},
            format="json",
            headers=alice_funded.headers,
        )
    assert response.status_code == 200, response.json()
    statements = [q["sql"] for q in queries]
    assert len(statements) == STATEMENTS_PER_BUY, "\n".join(statements)
