"""Crypto racing: one requestId sent 30 times at once makes one cashout (every answer 200 with
the same one); cashouts with their own requestIds racing for the last dollar never overdraw it
(3003); a deposit's confirmations reported 30 times at once while the worker's deposit sweeps
run credit it exactly once."""

from decimal import Decimal

import pytest
import requests

from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.tasks import sweep_deposits
from ledger.models import Funding
from tests.crypto.conftest import cashout_body
from tests.factories import Actor, platform_id
from tests.faults.callback import CallbackServer
from tests.faults.processes import Process
from tests.races.conftest import (
    Call,
    N,
    answer,
    api_burst,
    client_token,
    money,
    outcomes,
    post,
    settled,
    shop,
    tasks_queued,
    wallet_clean,
)
from wallet.models import Transfer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

USER = platform_id(1)
AMOUNT = Decimal("25.00")  # each cashout's 2500 cents


def cashout(web: str, route: str, headers: dict[str, str], request_id: str) -> Call:
    body = cashout_body(chain="BSC", requestId=request_id)
    if route == "secure":
        return post(web, "/secure/crypto/withdraw", headers, body | {"platformId": USER})
    return post(web, "/client/crypto/withdraw", headers, body)


def caller(web: str, actor: Actor, route: str) -> dict[str, str]:
    return actor.headers if route == "secure" else client_token(web, actor, 1)


def all_sent() -> bool:
    return not CryptoWithdrawal.objects.exclude(status=CryptoWithdrawal.Status.SENT).exists()


@pytest.mark.parametrize("route", ["secure", "client"])
def test_one_request_id_makes_one_cashout(
    web: str, worker: Process, callback: CallbackServer, route: str
):
    actor = shop(callback.url)
    headers = caller(web, actor, route)

    answers = api_burst([cashout(web, route, headers, "same-request")] * N)

    assert outcomes(answers) == {(200, None): N}
    (made,) = CryptoWithdrawal.objects.all()
    assert {got.data["id"] for got in answers} == {str(made.id)}
    settled(all_sent, "the cashout approved and sent", worker)
    assert money(actor)["locked"] == AMOUNT
    assert money(actor)["available"] == Decimal("1000.00") - AMOUNT
    wallet_clean()


@pytest.mark.parametrize("route", ["secure", "client"])
def test_cashouts_racing_for_the_last_dollar(
    web: str, worker: Process, callback: CallbackServer, route: str
):
    actor = shop(callback.url, balance=str(AMOUNT * 10))
    headers = caller(web, actor, route)

    answers = api_burst([cashout(web, route, headers, f"request-{n:04d}") for n in range(N)])

    assert outcomes(answers) == {(200, None): 10, (400, 3003): N - 10}
    assert CryptoWithdrawal.objects.count() == 10
    assert money(actor)["available"] == Decimal("0.00")
    settled(all_sent, "the cashouts approved and sent", worker)
    assert money(actor)["locked"] == AMOUNT * 10
    wallet_clean()


def test_confirmations_racing_with_the_sweep_credit_once(
    web: str, worker: Process, callback: CallbackServer
):
    actor = shop(callback.url)
    address = answer(
        requests.get(
            f"{web}/secure/crypto/deposit-address",
            params={"chain": "BSC", "platformId": USER},
            headers=actor.headers,
            timeout=60,
        )
    ).data["address"]
    transfer = {"chain": "BSC", "token": "USDC", "address": address, "amount": "40.00"}
    sent = answer(
        requests.post(
            f"{web}/sandbox/crypto/transfers", json=transfer, headers=actor.headers, timeout=60
        )
    ).data
    path = f"/sandbox/crypto/transfers/{sent['txHash']}/confirmations"
    for _ in range(10):
        sweep_deposits.delay()  # the worker asks the chain meanwhile, as beat has it do

    # Confirmations only grow: a report older than one already applied is refused (3002).
    answers = api_burst(
        [post(web, path, actor.headers, {"confirmations": 15 + n}) for n in range(N)]
    )

    assert set(outcomes(answers)) <= {(200, None), (409, 3002)}
    (deposit,) = CryptoDeposit.objects.all()
    settled(lambda: not tasks_queued(), "the sweeps done", worker)
    deposit.refresh_from_db()
    assert deposit.status == CryptoDeposit.Status.COMPLETED
    assert Transfer.objects.filter(kind="CRYPTO_DEPOSIT", cause_id=str(deposit.id)).count() == 1
    funding = Funding.objects.get(source_id=str(deposit.id), type=Funding.Type.DEPOSIT)
    assert funding.status == Funding.Status.COMPLETED
    assert money(actor)["available"] == Decimal("1040.00")
    wallet_clean()
