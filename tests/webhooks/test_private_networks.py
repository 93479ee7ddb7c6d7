"""CALLBACK_ALLOW_PRIVATE_NETWORKS (issue 38 item 7): outside the sandbox a callback URL must be
https on a public address unless it is on; on, an http receiver on loopback or a private network
is called (a staging deployment, an end-to-end check on one machine) and ``check --deploy``
warns. Off, nothing of that changes."""

from urllib.parse import urlsplit

import pytest
from django.core import checks

from core.errors import DomainError
from merchants.models import Merchant
from merchants.webhooks.callbacks import merchant_callback_url_set
from merchants.webhooks.outbox import webhook_event_emit
from tests.factories import make_actor
from tests.webhooks.conftest import webhook_secret
from tests.webhooks.network import Network, network
from tests.withdrawals.receiver import Receiver

__all__ = ["network"]

pytestmark = pytest.mark.django_db

PRIVATE_NAME = "hooks.staging.internal"


@pytest.fixture
def production(settings):  # type: ignore[no-untyped-def]
    settings.SANDBOX = False
    return settings


def url_set(url: str) -> Merchant:
    actor = make_actor(name="Staging shop", webhook_secret=webhook_secret())
    return merchant_callback_url_set(merchant=actor.merchant, url=url)


def deploy_warnings() -> list[str]:
    return [
        message.id or ""
        for message in checks.run_checks(include_deployment_checks=True)
        if message.id and message.id.startswith("merchants.")
    ]


def test_off_an_http_loopback_receiver_is_refused(production, hooks: Receiver):
    production.CALLBACK_ALLOW_PRIVATE_NETWORKS = False

    with pytest.raises(DomainError) as refused:
        url_set(hooks.url)

    assert refused.value.key == "CALLBACK_URL_TEST_FAILED"
    assert "https" in refused.value.message
    assert hooks.received == []
    assert "merchants.W003" not in deploy_warnings()


def test_off_a_private_address_is_refused_before_connecting(production, network: Network):
    production.CALLBACK_ALLOW_PRIVATE_NETWORKS = False
    network.resolve(PRIVATE_NAME, ["10.1.2.3"])

    with pytest.raises(DomainError) as refused:
        url_set(f"https://{PRIVATE_NAME}/hooks")

    assert "non-public address" in refused.value.message
    assert network.connects == []


def test_on_an_http_loopback_receiver_is_saved_and_called(production, hooks: Receiver, deliver):
    production.CALLBACK_ALLOW_PRIVATE_NETWORKS = True

    merchant = url_set(hooks.url)

    assert merchant.callback_url == hooks.url
    assert [r.json for r in hooks.received] == [{"test": True}]
    event = webhook_event_emit(
        merchant=merchant,
        type="trade.pending",
        subject_type="trade",
        subject_id="t-1",
        sequence=2,
        body_key="trade",
        body={"id": "t-1"},
    )
    deliver(str(event.id))
    event.refresh_from_db()
    assert event.status == "delivered"
    assert "merchants.W003" in deploy_warnings()


def test_on_a_private_address_is_called(production, network: Network, hooks: Receiver):
    production.CALLBACK_ALLOW_PRIVATE_NETWORKS = True
    network.resolve(PRIVATE_NAME, ["10.1.2.3"])
    network.route("10.1.2.3", 80, ("127.0.0.1", urlsplit(hooks.url).port or 80))

    merchant = url_set(f"http://{PRIVATE_NAME}/hooks")

    assert merchant.callback_url == f"http://{PRIVATE_NAME}/hooks"
    assert network.connects == [("10.1.2.3", 80)]
    assert [r.json for r in hooks.received] == [{"test": True}]
