"""A caller that has not proven who it is never counts against a merchant's budget: forged,
expired and revoked client tokens, and API keys refused for their address, beside a legitimate
caller of the same merchant whose remaining budget moves by its own requests only.

The gate counts a request in the round trip it makes before authentication only for a caller this
process has already proven (``merchants.views``: ``caller_peek``); a request counted there and then
refused used to be given back after, and the flood of those in between spent the budget."""

import secrets
import threading
from datetime import timedelta

import pytest
from django.db import connection
from rest_framework.test import APIClient

from core import clock
from merchants import gate
from merchants.models import ApiSecret
from merchants.services import api_secret_rotate
from merchants.tokens import client_token_encode
from tests.factories import add_api_key, auth_body, make_actor
from tests.test_ratelimits import frozen_clock  # noqa: F401  (a fixture)

WITHDRAW = "/client/trading/withdraw"
BALANCE = "/v1/wallets/me/balance"
FLOOD_THREADS = 36
FLOOD_REQUESTS = 12


def _token(merchant_id: str, secret: str, *, issued_ago: int = 0, ttl: int = 3600) -> str:
    return client_token_encode(
        merchant_id=merchant_id,
        secret=secret,
        client={"platformID": auth_body(1)["clientPlatformId"]},
        issued_at=clock.now() - timedelta(seconds=issued_ago),
        ttl=ttl,
    )


def _legitimate_token(api: APIClient, actor) -> str:
    response = api.post(
        "/auth/authenticate-client", auth_body(1), format="json", headers=actor.headers
    )
    assert response.status_code == 200, response.content
    return response.json()["data"]["token"]


def _unproven_tokens(actor) -> dict[str, str]:
    """One token of each kind that names the merchant without proving it is its caller."""
    merchant_id = str(actor.merchant.pk)
    live = ApiSecret.objects.get(merchant=actor.merchant, expires_at__isnull=True).secret
    forged = _token(merchant_id, secrets.token_urlsafe(48))
    expired = _token(merchant_id, live, issued_ago=7200, ttl=60)
    api_secret_rotate(merchant=actor.merchant, grace=timedelta(0))  # ``live`` is revoked now
    revoked = _token(merchant_id, live)
    return {"forged": forged, "expired": expired, "revoked": revoked}


@pytest.fixture
def counted_windows(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The window each request's gate round trip counted in (None: it counted nothing)."""
    seen: list[object] = []
    real = gate.shared_read

    def spy(**kwargs):
        seen.append(kwargs["window"])
        return real(**kwargs)

    monkeypatch.setattr(gate, "shared_read", spy)
    return seen


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen_clock")
def test_an_unproven_client_token_is_never_counted_in_the_gate(api, counted_windows):
    victim, _other = make_actor(name="Victim"), make_actor(name="Bystander")
    legitimate = _legitimate_token(api, victim)
    # The process now keeps the victim's secrets: a legitimate call is counted in the gate.
    assert (
        api.post(WITHDRAW, {}, format="json", HTTP_AUTHORIZATION=f"Bearer {legitimate}").status_code
        == 400
    )
    assert counted_windows[-1] is not None
    tokens = _unproven_tokens(victim)
    api.post(WITHDRAW, {}, format="json", HTTP_AUTHORIZATION=f"Bearer {legitimate}")  # rows again

    for kind, token in tokens.items():
        counted_windows.clear()
        response = api.post(WITHDRAW, {}, format="json", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 401, (kind, response.content)
        assert response.json()["error"]["key"] == "INVALID_TOKEN"
        assert counted_windows == [None], kind


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen_clock")
def test_a_key_refused_for_its_address_is_never_counted_in_the_gate(api, counted_windows):
    victim = make_actor(name="Victim")
    pinned = add_api_key(victim.merchant, ip_whitelist=("10.9.9.9/32",))
    for _ in range(2):  # the first call keeps the key in this process
        allowed = api.get(BALANCE, headers={"api-key": pinned}, REMOTE_ADDR="10.9.9.9")
        assert allowed.status_code == 200
    assert counted_windows[-1] is not None  # kept and proven: counted in the gate

    counted_windows.clear()
    refused = api.get(BALANCE, headers={"api-key": pinned}, REMOTE_ADDR="10.1.1.1")
    assert refused.json()["error"]["key"] == "API_KEY_IP_DENIED"
    assert counted_windows == [None]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("frozen_clock")
def test_a_flood_of_unproven_tokens_leaves_the_merchants_budget_alone():
    victim, bystander = make_actor(name="Victim"), make_actor(name="Bystander")
    api = APIClient()
    legitimate = _legitimate_token(api, victim)
    _legitimate_token(api, bystander)
    unproven = list(_unproven_tokens(victim).values())
    legitimate = _legitimate_token(api, victim)  # the rotation stopped the first one's secret

    def legit_call() -> tuple[int, int]:
        response = api.post(WITHDRAW, {}, format="json", HTTP_AUTHORIZATION=f"Bearer {legitimate}")
        return response.status_code, int(response["X-RateLimit-Remaining"])

    status, remaining = legit_call()
    assert status == 400
    stop = threading.Event()
    refusals: list[int] = []

    def flood(token: str) -> None:
        client = APIClient()
        try:
            for _ in range(FLOOD_REQUESTS):
                answer = client.post(
                    WITHDRAW, {}, format="json", HTTP_AUTHORIZATION=f"Bearer {token}"
                )
                refusals.append(answer.status_code)
                if stop.is_set():
                    break
        finally:
            connection.close()

    threads = [
        threading.Thread(target=flood, args=(unproven[n % len(unproven)],))
        for n in range(FLOOD_THREADS)
    ]
    for thread in threads:
        thread.start()
    seen: list[tuple[int, int]] = []
    while any(thread.is_alive() for thread in threads):
        seen.append(legit_call())
    stop.set()
    for thread in threads:
        thread.join()
    seen.append(legit_call())

    assert set(refusals) == {401}
    assert [status for status, _ in seen] == [400] * len(seen)
    assert [left for _, left in seen] == [remaining - n for n in range(1, len(seen) + 1)]
