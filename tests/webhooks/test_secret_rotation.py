"""A merchant's webhook secret rotated without a gap (docs/ops/rotation.md): during the overlap
each delivery carries a signature by the new secret and one by the old (Standard Webhooks,
space-separated in ``webhook-signature``), so a receiver verifying with either accepts it; after
the overlap only the new secret signs. By ``manage.py rotate_webhook_secret`` and by the admin
action on the merchants' list. Verified with the standardwebhooks library, as receivers do."""

import base64
import json
import secrets
from io import StringIO

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command

from merchants.models import Merchant
from tests.webhooks.conftest import approval_event, bought, shop_actor, webhook_secret
from tests.withdrawals.conftest import make_listing
from tests.withdrawals.receiver import Received

pytestmark = pytest.mark.django_db


def rotate(*argv: str) -> dict:
    out = StringIO()
    call_command("rotate_webhook_secret", *argv, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def delivered(api, shop, catalog_item, hooks, deliver):
    """Buys one listing and delivers its approval: what the receiver got."""

    def run() -> Received:
        trade_id = bought(api, shop, make_listing(catalog_item, "10.00"))
        deliver(str(approval_event(trade_id).id))
        return hooks.received[-1]

    return run


def test_both_secrets_sign_during_the_overlap_then_only_the_new_one(shop, delivered, time_passes):
    old = shop.merchant.webhook_secret
    assert delivered().verifies(old)

    printed = rotate("--merchant", str(shop.merchant.pk))

    new = printed["webhookSecret"]
    assert new != old
    assert new.startswith("whsec_")
    assert printed["merchantId"] == str(shop.merchant.pk)
    assert printed["previousSecretExpiresAt"].endswith("Z")
    during = delivered()
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    assert during.verifies(new)
    assert during.verifies(old)

    time_passes(23 * 3600)  # still within the default 24 hours
    assert delivered().verifies(old)

    time_passes(3600 + 1)
    after = delivered()
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert after.verifies(new)
    assert not after.verifies(old)


def test_a_zero_overlap_stops_the_old_secret_at_once(shop, delivered):
    old = shop.merchant.webhook_secret

    printed = rotate("--merchant", str(shop.merchant.pk), "--overlap-hours", "0")

    assert printed["previousSecretExpiresAt"] is None
    received = delivered()
    assert received.verifies(printed["webhookSecret"])
    assert not received.verifies(old)


def test_the_receivers_new_secret_can_be_given_and_a_second_rotation_stops_the_oldest(
    shop, delivered
):
    first, given, third = shop.merchant.webhook_secret, webhook_secret(), webhook_secret()

    assert rotate("--merchant", str(shop.merchant.pk), "--secret", given)["webhookSecret"] == given
    rotate("--merchant", str(shop.merchant.pk), "--secret", third)

    received = delivered()
    assert received.verifies(third)
    assert received.verifies(given)  # in its overlap
    assert not received.verifies(first)  # two sign at most


def test_the_longest_secret_standard_webhooks_allows_is_kept_and_signs(shop, delivered):
    """64 bytes: ``whsec_`` and 88 base64 characters (the columns held 64 characters, so
    ``create_merchant --webhook-secret`` and a rotation failed from 43 bytes on)."""
    longest = "whsec_" + base64.b64encode(secrets.token_bytes(64)).decode()
    out = StringIO()
    call_command("create_merchant", "--name", "Long", "--webhook-secret", longest, stdout=out)
    assert Merchant.objects.get(pk=json.loads(out.getvalue())["merchantId"]).webhook_secret == (
        longest
    )

    rotate("--merchant", str(shop.merchant.pk), "--secret", longest)

    assert delivered().verifies(longest)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--secret", "whsec_short"], "base64"),
        (["--secret", "whsec_" + "A" * 28], "24 to 64 bytes"),
        (["--overlap-hours", "-1"], "0 to 720"),
        (["--overlap-hours", "721"], "0 to 720"),
    ],
)
def test_a_bad_secret_or_overlap_is_refused_and_changes_nothing(shop, argv, message):
    before = shop.merchant.webhook_secret
    with pytest.raises(CommandError, match=message):
        rotate("--merchant", str(shop.merchant.pk), *argv)

    assert Merchant.objects.get(pk=shop.merchant.pk).webhook_secret == before


@pytest.mark.parametrize("merchant", ["not-a-uuid", "6f1b0c6e-9b1c-4a51-a0a6-7d8b4d8e0f11"])
def test_an_unknown_merchant_is_refused(db, merchant):
    with pytest.raises(CommandError, match="no merchant"):
        rotate("--merchant", merchant)


def test_the_admin_action_shows_the_new_secret_once_and_logs_no_secret(
    admin_client, shop, hooks, delivered
):
    other = shop_actor("Other shop", hooks.url)
    old, others = shop.merchant.webhook_secret, other.merchant.webhook_secret

    response = admin_client.post(
        "/admin/merchants/merchant/",
        {"action": "rotate_webhook_secret", "_selected_action": [str(shop.merchant.pk)]},
        follow=True,
    )

    assert response.status_code == 200
    merchant = Merchant.objects.get(pk=shop.merchant.pk)
    new = merchant.webhook_secret
    assert new != old
    assert merchant.previous_webhook_secret == old
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert sum(new in text for text in shown) == 1
    logged = LogEntry.objects.get(object_id=str(shop.merchant.pk))
    assert "Rotated the webhook secret" in logged.change_message
    assert new not in logged.change_message
    assert old not in logged.change_message
    assert Merchant.objects.get(pk=other.merchant.pk).webhook_secret == others  # not selected
    received = delivered()
    assert received.verifies(new)
    assert received.verifies(old)
