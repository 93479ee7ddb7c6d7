"""A merchant's share of the webhook workers on SQLite (the quick start's database, where a UUID
is stored as 32 hex digits and a statement written by hand must convert it): a deferral lets
its lease go, so a delivery that ends, or the deferral itself, hands it on. The tests of
tests/webhooks/test_merchant_share.py that run without worker threads, collected a second time
on the quick start's settings."""

import pytest

from tests.webhooks.conftest import deliver, outbox  # noqa: F401 (fixtures)
from tests.webhooks.test_merchant_share import (  # noqa: F401 (tests collected here)
    share,
    test_a_deferral_that_finds_room_once_let_go_claims_again,
    test_a_lease_left_by_a_dead_worker_takes_no_share,
)
from tests.withdrawals.conftest import hooks  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
