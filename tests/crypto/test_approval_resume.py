"""A cashout's approval delivered again (the broker's redelivery after a worker died past the
merchant's answer, or the sweep's) hands the broadcast its answer made due on again, and sends
nothing twice (issue 39 item 3: it raised ``KeyError('crypto_withdrawal')``)."""

import pytest

from core.handoffs import HANDOFFS
from crypto.models import CryptoWithdrawal
from crypto.services.withdrawals import CASHOUT_BROADCAST
from merchants.webhooks.delivery import webhook_event_deliver
from merchants.webhooks.models import WebhookEvent
from sandbox.models import SandboxChainTransfer
from tests.crypto.conftest import cashout_body, clean, data, user_headers

pytestmark = pytest.mark.django_db


def test_a_cashout_approval_delivered_twice_resumes_its_broadcast_once(
    desk, alice, bob, hooks, bob_hooks, monkeypatch
):
    with monkeypatch.context() as lost:
        # The worker died after recording the answer, before handing the broadcast on.
        lost.setitem(HANDOFFS.bindings, CASHOUT_BROADCAST, lambda withdrawal_id: None)
        created = data(
            desk.post("/client/crypto/withdraw", cashout_body(), headers=user_headers(desk, alice))
        )
    cashout = CryptoWithdrawal.objects.get(pk=created["id"])
    assert cashout.status == "approved"
    approval = WebhookEvent.objects.get(subject_id=created["id"], is_approval=True)
    assert approval.status == "delivered"

    desk.run(lambda: webhook_event_deliver(event_id=str(approval.id)))

    cashout.refresh_from_db()
    assert cashout.status == "sent"
    assert len(hooks.of_type("crypto_withdrawal.awaiting_approval")) == 1  # not asked again

    desk.run(lambda: webhook_event_deliver(event_id=str(approval.id)))

    assert SandboxChainTransfer.objects.filter(tx_hash=cashout.tx_hash).count() == 1
    assert SandboxChainTransfer.objects.count() == 1
    assert bob_hooks.received == []  # the other merchant heard nothing of it
    assert clean()
