"""Crypto tests: eager Celery, a real local HTTP receiver as the merchant's callback URL, funded
merchants, and the HTTP calls the suites repeat (addresses, sandbox transfers, cashouts)."""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import Actor, make_actor, platform_id
from tests.withdrawals.conftest import Desk, client_headers, envelope, funded
from tests.withdrawals.receiver import Receiver, receiver
from wallet.selectors import wallet_balances, wallet_invariants_check

# Checksummed EVM addresses of the Hardhat/Anvil test mnemonic (accounts 5 and 6).
RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"
OTHER_RECIPIENT = "0x976EA74026E726554dB657fA54763abd0C3a0aa9"
SOL_RECIPIENT = "5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N"
USER = platform_id(1)
OTHER_USER = platform_id(2)


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def bob_hooks() -> Iterator[Receiver]:
    with receiver() as state:
        yield state


@pytest.fixture
def alice(db: None, hooks: Receiver) -> Actor:
    return funded(make_actor(name="Alice"), "1000.00", hooks.url)


@pytest.fixture
def bob(db: None, bob_hooks: Receiver) -> Actor:
    return funded(make_actor(name="Bob"), "1000.00", bob_hooks.url)


@pytest.fixture
def desk(api, django_capture_on_commit_callbacks) -> Desk:
    return Desk(api, django_capture_on_commit_callbacks)


def data(response, status: int = 200) -> Any:
    assert response.status_code == status, response.content
    body = envelope(response)
    assert body["success"] is True
    return body["data"]


def user_headers(desk: Desk, actor: Actor, partner: int = 1) -> dict[str, str]:
    return client_headers(desk.api, actor, partner)


def deposit_address(desk: Desk, actor: Actor, chain: str, token: str = "USDC", user: str = USER):
    response = desk.get(
        "/secure/crypto/deposit-address",
        headers=actor.headers,
        params={"chain": chain, "token": token, "platformId": user},
    )
    return data(response)


def open_solana_address(desk: Desk, actor: Actor, clock_advance, token: str = "USDC", user=USER):
    """Ask for the token's account, let the chain open it, and return the active address."""
    first = deposit_address(desk, actor, "SOL", token, user)
    if first["status"] == "pending":
        clock_advance(11)
        first = deposit_address(desk, actor, "SOL", token, user)
    assert first["status"] == "active", first
    return first


def send(desk: Desk, actor: Actor, chain: str, address: str, amount: str, **fields: Any):
    body = {"chain": chain, "token": fields.pop("token", "USDC"), "address": address}
    body |= {"amount": amount, **fields}
    return desk.post("/sandbox/crypto/transfers", body, headers=actor.headers)


def confirm(desk: Desk, actor: Actor, tx_hash: str, confirmations: int):
    return desk.post(
        f"/sandbox/crypto/transfers/{tx_hash}/confirmations",
        {"confirmations": confirmations},
        headers=actor.headers,
    )


def cashout_body(**fields: Any) -> dict[str, Any]:
    body = {
        "chain": "ETH",
        "token": "USDC",
        "address": RECIPIENT,
        "amountCents": 2500,
        "requestId": "req-00000001",
    }
    return body | fields


def money(actor: Actor) -> dict[str, Decimal]:
    return wallet_balances(merchant=actor.merchant)


def clean() -> bool:
    report = wallet_invariants_check()
    assert report.clean, report
    return True
