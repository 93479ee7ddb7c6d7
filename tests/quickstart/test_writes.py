"""Every operation outside the sandbox helpers, over SQLite: the walks of
tests/test_openapi_bodies.py (requests that succeed, over a seeded world, each answer checked
against the document) collected here a second time, on the quick start's settings. Its ``world``
fixture, a market of its own, stands in for the session's in this module."""

import pytest

from tests.test_openapi import CONFORMANCE, schema, wsgi_in_test_transaction  # noqa: F401
from tests.test_openapi_bodies import (  # noqa: F401 (fixtures and tests collected here)
    hooks,
    shop,
    test_catalog_and_inventories,
    test_clients_webhooks_and_health,
    test_crypto_ledger_and_wallet,
    test_deposits_through_their_states,
    test_every_operation_is_walked,
    test_withdrawals_their_history_and_cancels,
    walk,
    world,
)

pytestmark = pytest.mark.usefixtures("wsgi_in_test_transaction")
