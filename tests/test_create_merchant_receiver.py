"""``create_merchant --callback-url`` with a receiver that verifies, in one step: the receiver of
docs/webhooks.md, run for real, given the secret before the test event is sent
(``--webhook-secret``, or the new secret the command prints first and names in its refusal)."""

import base64
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from merchants.models import Merchant
from merchants.services import webhook_secret_new
from tests.sandbox.test_webhook_test_events import guide_receiver

pytestmark = pytest.mark.django_db


def create(*args: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command("create_merchant", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def test_a_receiver_given_the_secret_accepts_the_test_event_in_one_step(tmp_path):
    secret = webhook_secret_new()
    with guide_receiver(tmp_path, secret) as url:
        data, printed_first = create(
            "--name", "Shop", "--callback-url", url, "--webhook-secret", secret
        )

    merchant = Merchant.objects.get(pk=data["merchantId"])
    assert (merchant.callback_url, merchant.webhook_secret) == (url, secret)
    assert data["webhookSecret"] == secret
    assert printed_first == ""  # the secret was the caller's: nothing to tell


def test_the_new_secret_is_printed_before_the_test_event_and_named_when_refused(tmp_path):
    with guide_receiver(tmp_path, webhook_secret_new()) as url:
        err = StringIO()
        with pytest.raises(CommandError) as refused:
            call_command(
                "create_merchant",
                "--name",
                "Shop",
                "--callback-url",
                url,
                stdout=StringIO(),
                stderr=err,
            )
    printed = err.getvalue()
    secret = printed.split()[1]

    assert printed.startswith(f"webhookSecret: {secret} ")
    assert f"--webhook-secret {secret}" in str(refused.value)
    assert not Merchant.objects.exists()  # nothing was created
    # As the refusal says: the receiver gets that secret, the command runs again with it.
    with guide_receiver(tmp_path, secret) as url:
        data, _ = create("--name", "Shop", "--callback-url", url, "--webhook-secret", secret)
    assert Merchant.objects.get(pk=data["merchantId"]).callback_url == url


@pytest.mark.parametrize(
    "secret",
    [
        "not-a-secret",
        "whsec_!!!!",
        "whsec_" + base64.b64encode(b"x" * 8).decode(),  # too short to sign safely
        base64.b64encode(b"x" * 24).decode(),  # without whsec_
    ],
)
def test_a_malformed_secret_is_refused_before_anything(secret):
    with pytest.raises(CommandError, match="webhook-secret"):
        call_command(
            "create_merchant", "--name", "X", "--webhook-secret", secret, stdout=StringIO()
        )

    assert not Merchant.objects.exists()
