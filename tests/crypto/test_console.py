"""The staff console pages of crypto, and the sandbox chain switch."""

import pytest
from django.contrib.auth.models import User

from tests.crypto.conftest import USER, cashout_body, data, deposit_address, send
from tests.factories import assert_error

pytestmark = pytest.mark.django_db


def test_console_lists_and_shows_deposits_and_cashouts(desk, alice):
    address = deposit_address(desk, alice, "ETH")["address"]
    deposit = data(send(desk, alice, "ETH", address, "20", confirmations=12))["deposit"]
    cashout = data(
        desk.post("/secure/crypto/withdraw", cashout_body(platformId=USER), headers=alice.headers)
    )
    desk.api.force_login(User.objects.create_superuser("staff", "staff@example.com", "x"))

    pages = {
        "/admin/crypto/cryptodeposit/?status__exact=completed": deposit["id"],
        f"/admin/crypto/cryptodeposit/{deposit['id']}/change/": "crypto_deposit.completed",
        "/admin/crypto/cryptowithdrawal/?chain__exact=ETH": cashout["id"],
        f"/admin/crypto/cryptowithdrawal/{cashout['id']}/change/": "crypto_withdrawal.sent",
        "/admin/crypto/addressallocation/": address,
        "/admin/crypto/solanatokenaccount/": "Solana token accounts",
        "/admin/crypto/merchantcryptopolicy/": "merchant crypto policies",
        "/admin/crypto/flaggedaddress/": "flagged addresses",
        "/admin/sandbox/sandboxchain/": "sandbox chain",
    }
    for path, shown in pages.items():
        response = desk.api.get(path)
        assert response.status_code == 200, path
        assert shown in response.content.decode(), path


def test_sandbox_chain_switch_takes_known_chains_only(desk, alice):
    response = desk.post("/sandbox/crypto/chains/TRX", {"paused": True}, headers=alice.headers)
    assert "chain" in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]
    response = desk.post("/sandbox/crypto/chains/SOL", {"paused": "yes"}, headers=alice.headers)
    assert "paused" in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]
    state = data(
        desk.post("/sandbox/crypto/chains/SOL", {"failBroadcasts": True}, headers=alice.headers)
    )
    assert state == {"chain": "SOL", "paused": False, "failBroadcasts": True}
