"""Thin Celery tasks: take ids, call a service. Sweeps re-drive what a lost task left."""

import logging

from celery import shared_task

from core.handoffs import enqueue
from crypto.chains.base import ChainError
from crypto.chains.evm import evm_served_chains
from crypto.chains.solana import solana_served
from crypto.evm.scanner import evm_deposits_scan_all
from crypto.evm.sweeps import evm_sweeps_advance, evm_sweeps_plan, evm_sweeps_request
from crypto.evm.transactions import evm_transactions_sweep
from crypto.services.addresses import solana_account_close, solana_accounts_sweep
from crypto.services.deposits import crypto_deposit_observe, crypto_deposits_sweep
from crypto.services.withdrawals import (
    crypto_withdrawal_broadcast,
    crypto_withdrawals_broadcast_due,
    crypto_withdrawals_sweep_sent,
)
from crypto.solana.scanner import solana_deposits_scan
from crypto.solana.sweeps import solana_sweep_request, solana_sweeps_advance, solana_sweeps_plan
from crypto.solana.transactions import solana_transactions_sweep

logger = logging.getLogger(__name__)


@shared_task(name="crypto.broadcast_withdrawal", acks_late=True, time_limit=60)
def broadcast_withdrawal(withdrawal_id: str) -> None:
    crypto_withdrawal_broadcast(withdrawal_id=withdrawal_id)


def enqueue_broadcast(withdrawal_id: str) -> None:
    enqueue(broadcast_withdrawal, withdrawal_id)


@shared_task(name="crypto.close_token_account", acks_late=True, time_limit=60)
def close_token_account(address: str) -> None:
    solana_account_close(address=address)


def enqueue_account_close(address: str) -> None:
    enqueue(close_token_account, address)


@shared_task(name="crypto.sweep_withdrawals", time_limit=120)
def sweep_withdrawals() -> int:
    due = crypto_withdrawals_broadcast_due()
    for withdrawal_id in due:
        enqueue_broadcast(withdrawal_id)
    return len(due) + crypto_withdrawals_sweep_sent()


@shared_task(name="crypto.sweep_deposits", time_limit=120)
def sweep_deposits() -> int:
    return crypto_deposits_sweep() + solana_accounts_sweep()


# Real EVM chains: idle unless CRYPTO_CHAINS is the EVM gateway with a node for the chain.


@shared_task(name="crypto.evm_scan", time_limit=120)
def evm_scan() -> int:
    return evm_deposits_scan_all(chains=evm_served_chains(), observe=crypto_deposit_observe)


@shared_task(name="crypto.evm_sweep_transactions", time_limit=120)
def evm_sweep_transactions() -> int:
    return evm_transactions_sweep() if evm_served_chains() else 0


@shared_task(name="crypto.evm_sweep_addresses", time_limit=120)
def evm_sweep_addresses() -> int:
    return evm_sweeps_advance() if evm_served_chains() else 0


@shared_task(name="crypto.evm_plan_sweeps", time_limit=600)
def evm_plan_sweeps() -> int:
    return evm_sweeps_plan(chains=evm_served_chains())


@shared_task(name="crypto.evm_sweep_address", acks_late=True, time_limit=120)
def evm_sweep_address(allocation_id: int) -> int:
    return len(evm_sweeps_request(allocation_id=allocation_id, chains=evm_served_chains()))


def enqueue_address_sweep(allocation_id: str) -> None:
    enqueue(evm_sweep_address, int(allocation_id))


# Real Solana: idle unless CRYPTO_CHAINS is (or holds) the Solana gateway with a node.


@shared_task(name="crypto.solana_scan", time_limit=120)
def solana_scan() -> int:
    if not solana_served():
        return 0
    try:
        return solana_deposits_scan(observe=crypto_deposit_observe)
    except ChainError as exc:
        logger.warning("SOL scan stopped: %s", exc)
        return 0


@shared_task(name="crypto.solana_sweep_transactions", time_limit=120)
def solana_sweep_transactions() -> int:
    return solana_transactions_sweep() if solana_served() else 0


@shared_task(name="crypto.solana_sweep_accounts", time_limit=120)
def solana_sweep_accounts() -> int:
    return solana_sweeps_advance() if solana_served() else 0


@shared_task(name="crypto.solana_plan_sweeps", time_limit=600)
def solana_plan_sweeps() -> int:
    return solana_sweeps_plan() if solana_served() else 0


@shared_task(name="crypto.solana_sweep_account", acks_late=True, time_limit=120)
def solana_sweep_account(account_id: int) -> bool:
    if not solana_served():
        return False
    try:
        return solana_sweep_request(account_id=account_id) is not None
    except ChainError as exc:
        logger.warning("sweep of token account %s not started: %s", account_id, exc)
        return False


def enqueue_account_sweep(account_id: str) -> None:
    enqueue(solana_sweep_account, int(account_id))
