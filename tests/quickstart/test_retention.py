"""The retention purges over SQLite (core.retention writes them one statement per table there,
without row locks): the tests of tests/ops/test_retention.py collected a second time, on the
quick start's settings. The plan of a batch is PostgreSQL's own and is checked only there."""

import pytest

from tests.ops.test_retention import (  # noqa: F401 (tests collected here)
    TestTradeEvents,
    TestWebhookEvents,
    test_ended_admin_sessions_go_live_ones_stay,
    test_ended_rate_limit_windows_go_open_ones_stay,
    test_expired_idempotency_keys_go_in_batches_live_ones_stay,
    test_identity_notifications_past_the_replay_window_go,
)

pytestmark = pytest.mark.django_db
