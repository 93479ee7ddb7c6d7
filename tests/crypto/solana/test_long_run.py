"""The Solana deposit flow run long, as an operator sees it: the HTTP API in front, a real Celery
worker behind it (started as the deployment starts it, pointed at the recorded RPC server through
the settings the README names), the beat's tasks sent by the test round after round. A deposit is
credited and its account swept and closed; the worker is killed; a wallet pays into the closed
account, re-creating it, while tasks wait in the broker; a new worker credits it, sweeps it and
closes it again; past the hour the scanner reads closed accounts, another late payment is found
and swept the same way. At the end every token credited is in the hot wallet, each deposit was
credited once, the merchants were told once per status, and ``check_wallet`` finds nothing."""

from collections.abc import Callable, Iterator
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.management import call_command

from config.celery import app as celery_app
from crypto.keys import hot_wallet
from crypto.models import CryptoDeposit, SolanaTokenAccount
from crypto.tasks import solana_scan, sweep_deposits
from merchants.webhooks.tasks import sweep_webhooks
from tests.crypto.conftest import money
from tests.crypto.solana.conftest import HOT_WALLET_TOKENS, deposits, open_address
from tests.crypto.solana.rpc import SolanaRpc
from tests.factories import Actor
from tests.faults.conftest import events_delivered, queued_tasks
from tests.faults.database import database_url
from tests.faults.processes import Process, celery_worker, service_env, wait_until
from tests.withdrawals.receiver import Receiver

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BEAT = (solana_scan, sweep_deposits, sweep_webhooks)
WATCH_SECONDS = 3_601


@pytest.fixture
def broker(_eager_celery: None) -> Iterator[None]:
    """Tasks travel through the broker to the worker, from an empty queue."""
    celery_app.conf.task_always_eager = False
    celery_app.control.purge()
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def worker(broker: None, solana: SolanaRpc, tmp_path: Path) -> Iterator[Process]:
    """A worker whose settings point Solana at the recorded server, as an operator's would."""
    mints = solana.ledger.mints
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    env |= {
        "CRYPTO_CHAINS": "crypto.chains.solana.SolanaChains",
        "CRYPTO_SOL_RPC_URL": solana.url,
        "CRYPTO_SOL_TOKENS": f"USDC={mints['USDC']}:6,USDT={mints['USDT']}:6",
        "CRYPTO_SOLANA_SCAN_SECONDS": "0",
    }
    process = celery_worker(env, tmp_path / "worker.log").start()
    yield process
    process.stop()


def drive(condition: Callable[[], bool], what: str, worker: Process) -> None:
    """What beat sends, a round whenever the worker has taken the last one, until ``condition``
    holds."""

    def done() -> bool:
        if condition():
            return True
        if not queued_tasks():
            for task in BEAT:
                task.delay()
        return False

    wait_until(done, what, alive=[worker])


def idle(worker: Process, *actors: Actor) -> None:
    """Nothing waits in the broker, nothing is being run (kombu keeps a task taken and not yet
    acknowledged in its ``unacked`` hash) and every event was delivered."""
    broker = redis.Redis.from_url(celery_app.conf.broker_url)
    wait_until(
        lambda: (
            not queued_tasks()
            and not broker.hlen("unacked")
            and all(events_delivered(a) for a in actors)
        ),
        "the worker to finish",
        alive=[worker],
    )


def paid(solana: SolanaRpc, owner: str, amount: str) -> str:
    """A wallet pays ``owner``'s USDC associated token account, creating it when missing."""
    payer = solana.ledger.wallet()
    solana.ledger.mint(str(payer.pubkey()), "USDC", amount)
    return solana.ledger.pay(payer, owner, "USDC", amount, create=True)


def credited(tx_hash: str) -> Callable[[], bool]:
    return lambda: CryptoDeposit.objects.filter(tx_hash=tx_hash, status="completed").exists()


def closed_on_chain(solana: SolanaRpc, address: str) -> Callable[[], bool]:
    """Closed here and on the chain, its closing recorded."""

    def closed() -> bool:
        row = SolanaTokenAccount.objects.get(address=address)
        return (row.status, row.close_pending) == ("closed", False) and solana.ledger.account(
            address
        ) is None

    return closed


def completed_events(hooks: Receiver) -> list[str]:
    return [
        r.json["deposit"]["txHash"]
        for r in hooks.received
        if r.json["type"] == "crypto_deposit.completed"
    ]


def test_deposits_late_deposits_and_a_worker_restarted_keep_the_hot_wallet_whole(
    desk, alice, bob, hooks, bob_hooks, solana: SolanaRpc, worker: Process, clock_advance
):
    ledger = solana.ledger
    address = open_address(desk, alice)
    bobs = open_address(desk, bob)
    account = address["tokenAccount"]

    first = paid(solana, address["address"], "30")
    drive(credited(first), "the first deposit credited", worker)
    drive(closed_on_chain(solana, account), "the account swept and closed", worker)
    assert money(alice)["available"] == Decimal("1030.00")

    idle(worker, alice, bob)
    worker.kill()
    late = paid(solana, address["address"], "12.5")  # the wallet re-creates the account
    to_bob = paid(solana, bobs["address"], "5")
    for task in BEAT:  # beat goes on while no worker runs: the tasks wait in the broker
        task.delay()
    assert len(queued_tasks()) == len(BEAT)
    worker.start()
    drive(credited(late), "the late deposit credited", worker)
    drive(credited(to_bob), "bob's deposit credited", worker)
    drive(closed_on_chain(solana, account), "the re-created account closed again", worker)
    drive(closed_on_chain(solana, bobs["tokenAccount"]), "bob's account closed", worker)

    clock_advance(WATCH_SECONDS)  # past the hour: the closed accounts are only looked at
    much_later = paid(solana, address["address"], "7")
    drive(credited(much_later), "the deposit long after the closing credited", worker)
    drive(closed_on_chain(solana, account), "the account closed a third time", worker)
    idle(worker, alice, bob)

    # What the merchants see: each deposit once, completed, and one webhook each.
    assert sorted((d["txHash"], d["amount"], d["status"]) for d in deposits(desk, alice)) == sorted(
        [
            (first, "30.00", "completed"),
            (late, "12.50", "completed"),
            (much_later, "7.00", "completed"),
        ]
    )
    assert [(d["txHash"], d["amount"]) for d in deposits(desk, bob)] == [(to_bob, "5.00")]
    assert money(alice)["available"] == Decimal("1049.50")
    assert money(bob)["available"] == Decimal("1005.00")
    assert sorted(completed_events(hooks)) == sorted([first, late, much_later])
    assert completed_events(bob_hooks) == [to_bob]
    # Every token credited is in the hot wallet; no deposit account is left on the chain.
    hot = ledger.token_balance(hot_wallet("SOL"), "USDC") - Decimal(HOT_WALLET_TOKENS)
    assert hot == Decimal("54.5")
    assert ledger.account(account) is None
    assert ledger.account(bobs["tokenAccount"]) is None
    out = StringIO()
    call_command("check_wallet", stdout=out)
    assert "wallet invariants hold" in out.getvalue()
