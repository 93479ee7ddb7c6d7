"""API keys rotated with an overlap (docs/ops/rotation.md): a new key like the old one (same
merchant, scopes, allowed addresses, kind) is issued and shown once; the old key keeps working
until the end the rotation gave it, then is refused like a revoked one. By ``manage.py
rotate_api_key`` and by the admin action on the API keys' list."""

import json
import re
from io import StringIO

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command

from merchants.models import ApiKey, Scope
from merchants.selectors import api_key_hash
from merchants.services import api_key_revoke
from tests.factories import add_api_key, assert_error

pytestmark = pytest.mark.django_db

BALANCE = "/v1/wallets/me/balance"
RAW_KEY = re.compile(r"\b(ts[ka]_[0-9a-f]{12}_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])")


def balance(api, raw_key: str, **extra):
    return api.get(BALANCE, headers={"api-key": raw_key}, **extra)


def rotate(*argv: str) -> dict:
    out = StringIO()
    call_command("rotate_api_key", *argv, stdout=out)
    return json.loads(out.getvalue())


def test_both_keys_work_during_the_overlap_then_only_the_new_one(api, alice, bob, time_passes):
    old = alice.api_key
    assert balance(api, old).status_code == 200  # kept by the web process's caller cache too

    printed = rotate("--prefix", old[:16])

    new = printed["apiKey"]
    assert printed["prefix"] == new[:16] != old[:16]
    assert printed["previousPrefix"] == old[:16]
    assert printed["previousKeyExpiresAt"].endswith("Z")
    assert ApiKey.objects.get(prefix=new[:16]).key_hash == api_key_hash(new)
    for key in (old, new):
        assert balance(api, key).status_code == 200

    time_passes(24 * 3600 - 60)
    assert balance(api, old).status_code == 200

    time_passes(120)
    assert_error(balance(api, old), 401, 1901, "INVALID_API_KEY")
    answer = balance(api, new)
    assert answer.status_code == 200
    assert balance(api, bob.api_key).status_code == 200  # another merchant's key is untouched


def test_the_new_key_is_like_the_old_one(api, alice):
    old = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,), ip_whitelist=("10.0.0.0/8",))
    ApiKey.objects.filter(prefix=old[:16]).update(name="payments backend")

    new = rotate("--prefix", old[:16], "--overlap-hours", "1")["apiKey"]

    old_row, new_row = ApiKey.objects.get(prefix=old[:16]), ApiKey.objects.get(prefix=new[:16])
    assert new_row.merchant == old_row.merchant == alice.merchant
    assert (new_row.name, new_row.scopes, new_row.ip_whitelist, new_row.is_admin) == (
        "payments backend",
        ["LEDGER_READ"],
        ["10.0.0.0/8"],
        False,
    )
    assert new_row.expires_at is None
    assert new_row.revoked_at is None
    assert_error(balance(api, new), 403, 1904, "API_KEY_IP_DENIED")
    assert balance(api, new, REMOTE_ADDR="10.1.2.3").status_code == 200


def test_a_zero_overlap_stops_the_old_key_at_once(api, alice):
    new = rotate("--prefix", alice.api_key[:16], "--overlap-hours", "0")["apiKey"]

    assert_error(balance(api, alice.api_key), 401, 1901, "INVALID_API_KEY")
    assert balance(api, new).status_code == 200


def test_a_second_rotation_never_lengthens_the_first_keys_life(api, alice, time_passes):
    second = rotate("--prefix", alice.api_key[:16], "--overlap-hours", "1")["apiKey"]
    rotate("--prefix", second[:16], "--overlap-hours", "48")
    time_passes(3600 + 1)

    assert_error(balance(api, alice.api_key), 401, 1901, "INVALID_API_KEY")
    assert balance(api, second).status_code == 200  # in its own 48 hours


def test_a_revoked_an_ended_or_an_unknown_key_is_not_rotated(alice, time_passes):
    revoked = add_api_key(alice.merchant)
    api_key_revoke(api_key=ApiKey.objects.get(prefix=revoked[:16]))
    ended = rotate("--prefix", alice.api_key[:16], "--overlap-hours", "0")["previousPrefix"]
    before = ApiKey.objects.count()

    for prefix, message in ((revoked[:16], "no longer works"), (ended, "no longer works")):
        with pytest.raises(CommandError, match=message):
            rotate("--prefix", prefix)
    with pytest.raises(CommandError, match="no API key"):
        rotate("--prefix", "tsk_000000000000")
    assert ApiKey.objects.count() == before


def test_the_admin_action_shows_the_new_key_once(admin_client, api, alice, bob):
    row = ApiKey.objects.get(prefix=alice.api_key[:16])

    response = admin_client.post(
        "/admin/merchants/apikey/",
        {"action": "rotate_api_key", "_selected_action": [str(row.pk)]},
        follow=True,
    )

    assert response.status_code == 200
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    (new,) = [key for text in shown for key in RAW_KEY.findall(text)]
    assert new[:16] != row.prefix
    assert balance(api, new).status_code == 200
    assert balance(api, alice.api_key).status_code == 200  # the overlap
    row.refresh_from_db()
    assert row.expires_at is not None
    logged = " ".join(e.change_message for e in LogEntry.objects.all())
    assert "Rotated to" in logged
    assert new not in logged
    assert ApiKey.objects.filter(merchant=bob.merchant).count() == 1  # not selected
