"""The ``/sandbox/crypto/`` helpers: incoming transfers, their confirmations and reorgs, chain
switches, and the autopilot that confirms transfers by itself. Each helper acts on the calling
merchant's transactions and chain switches only."""

import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from eth_account import Account
from solders.keypair import Keypair

from core import clock
from core.db import row_upsert
from core.errors import DomainError
from crypto.keys import evm_address_valid, solana_address_valid
from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.networks import CHAINS, EVM_CHAINS, min_confirmations, network
from crypto.services.addresses import solana_accounts_sweep
from crypto.services.deposits import (
    AccountNotOpenError,
    UnknownAddressError,
    crypto_deposit_observe,
    crypto_deposit_refresh,
    crypto_deposits_sweep,
    deposit_target,
)
from crypto.services.withdrawals import crypto_withdrawal_refresh, crypto_withdrawals_sweep_sent
from merchants.models import Merchant
from sandbox.chains import sandbox_tx_hash
from sandbox.models import SandboxAutopilotState, SandboxChain, SandboxChainTransfer

MAX_AMOUNT = Decimal(1_000_000_000)


@dataclass(frozen=True)
class SandboxTransfer:
    transfer: SandboxChainTransfer
    deposit: CryptoDeposit | None = None
    withdrawal: CryptoWithdrawal | None = None


def _sender(chain: str) -> str:
    if chain in EVM_CHAINS:
        return str(Account.create(secrets.token_hex(16)).address)
    return str(Keypair().pubkey())


NOT_OURS = "Not a deposit address of this merchant."


def _invalid_address(field: str, message: str) -> DomainError:
    return DomainError("ONCHAIN_WITHDRAW_INVALID_ADDRESS", message, fields={field: message})


def sandbox_transfer_create(
    *,
    merchant: Merchant,
    chain: str,
    token: str,
    address: str,
    amount: Decimal,
    confirmations: int,
    sender: str | None,
) -> SandboxTransfer:
    """Someone sends ``amount`` of ``token`` to one of the merchant's users' addresses."""
    decimals = network(chain).token(token).decimals
    places = -int(amount.normalize().as_tuple().exponent)
    if amount <= 0 or amount > MAX_AMOUNT or places > decimals:
        message = f"A positive {token} amount with at most {decimals} decimals."
        raise DomainError("INVALID_AMOUNT", message, fields={"amount": message})
    valid = evm_address_valid if chain in EVM_CHAINS else solana_address_valid
    if sender is not None and not valid(sender):
        raise _invalid_address("from", f"Not a valid {chain} address.")
    try:
        target = deposit_target(chain=chain, token=token, address=address)
    except UnknownAddressError as exc:
        raise _invalid_address("address", NOT_OURS) from exc
    except AccountNotOpenError as exc:
        if exc.allocation.merchant_id != merchant.pk:
            raise _invalid_address("address", NOT_OURS) from exc
        raise DomainError(
            "INVALID_TRANSITION",
            f"The {token} token account of this address is not open: ask for the deposit "
            "address with this token and wait for active.",
        ) from exc
    if target.allocation.merchant_id != merchant.pk:
        raise _invalid_address("address", NOT_OURS)
    now = clock.now()
    transfer = SandboxChainTransfer.objects.create(
        tx_hash=sandbox_tx_hash(chain),
        chain=chain,
        contract=network(chain).token(token).contract,
        from_address=sender or _sender(chain),
        to_address=target.token_account or target.address,
        amount=amount,
        confirmations=confirmations,
        created_at=now,
        updated_at=now,
    )
    deposit = crypto_deposit_observe(
        chain=chain,
        token=token,
        target=target,
        tx_hash=transfer.tx_hash,
        from_address=transfer.from_address,
        amount_crypto=amount,
        confirmations=confirmations,
    )
    return SandboxTransfer(transfer=transfer, deposit=deposit)


def _scoped(merchant: Merchant, tx_hash: str) -> SandboxTransfer:
    """The merchant's own transaction (a deposit's or a cashout's), else 404."""
    transfer = SandboxChainTransfer.objects.filter(tx_hash=tx_hash).first()
    deposit = CryptoDeposit.objects.filter(merchant=merchant, tx_hash=tx_hash).first()
    withdrawal = CryptoWithdrawal.objects.filter(merchant=merchant, tx_hash=tx_hash).first()
    if transfer is None or (deposit is None and withdrawal is None):
        raise DomainError("TRANSACTION_NOT_FOUND")
    return SandboxTransfer(transfer=transfer, deposit=deposit, withdrawal=withdrawal)


def _refreshed(merchant: Merchant, tx_hash: str) -> SandboxTransfer:
    found = _scoped(merchant, tx_hash)
    if found.deposit is not None:
        crypto_deposit_refresh(deposit_id=found.deposit.pk)
    if found.withdrawal is not None:
        crypto_withdrawal_refresh(withdrawal_id=str(found.withdrawal.pk))
    return _scoped(merchant, tx_hash)


def sandbox_transfer_confirm(
    *, merchant: Merchant, tx_hash: str, confirmations: int
) -> SandboxTransfer:
    """The transaction now has ``confirmations`` (they only grow)."""
    found = _scoped(merchant, tx_hash)
    if found.transfer.dropped:
        raise DomainError("INVALID_TRANSITION", "The transaction was reorganised away.")
    moved = SandboxChainTransfer.objects.filter(
        tx_hash=tx_hash, dropped=False, confirmations__lte=confirmations
    ).update(confirmations=confirmations, updated_at=clock.now())
    if not moved:
        raise DomainError(
            "INVALID_TRANSITION",
            f"The transaction already has {found.transfer.confirmations} confirmations.",
        )
    return _refreshed(merchant, tx_hash)


def sandbox_transfer_reorg(*, merchant: Merchant, tx_hash: str) -> SandboxTransfer:
    """A reorganisation drops the transaction before it counted: the deposit fails, the
    cashout fails and is refunded. Credited or settled ones are final."""
    found = _scoped(merchant, tx_hash)
    deposit_final = found.deposit is not None and (
        found.deposit.status != CryptoDeposit.Status.PENDING
    )
    withdrawal_final = found.withdrawal is not None and (
        found.withdrawal.status != CryptoWithdrawal.Status.SENT
    )
    if found.transfer.dropped or deposit_final or withdrawal_final:
        raise DomainError("INVALID_TRANSITION", "Only a pending transaction can be reorganised.")
    SandboxChainTransfer.objects.filter(tx_hash=tx_hash).update(
        dropped=True, updated_at=clock.now()
    )
    return _refreshed(merchant, tx_hash)


def sandbox_chain_set(
    *, merchant: Merchant, chain: str, paused: bool | None, fail_broadcasts: bool | None
) -> SandboxChain:
    """Halt or resume a sandbox chain, make its node refuse broadcasts or accept them again, in
    the merchant's world: other merchants' addresses, credits and cashouts go on as before."""
    switches = {"paused": paused, "fail_broadcasts": fail_broadcasts}
    return row_upsert(
        SandboxChain,
        keys={"merchant": merchant, "chain": chain},
        values={name: value for name, value in switches.items() if value is not None},
    )


def _held_for_its_merchant(chain: str) -> Q:
    """The transfer is a deposit or cashout of a merchant that halted ``chain`` or turned the
    autopilot off in its world."""
    halted = SandboxChain.objects.filter(chain=chain, paused=True).values("merchant_id")
    by_hand = SandboxAutopilotState.objects.filter(enabled=False).values("merchant_id")
    held = Q(merchant_id__in=halted) | Q(merchant_id__in=by_hand)
    return Exists(
        CryptoDeposit.objects.filter(held, chain=chain, tx_hash=OuterRef("tx_hash"))
    ) | Exists(CryptoWithdrawal.objects.filter(held, chain=chain, tx_hash=OuterRef("tx_hash")))


def crypto_sandbox_autopilot_step() -> int:
    """With SANDBOX_AUTOPILOT_SECONDS=N, a transaction idle for N seconds gets the confirmations
    its chain asks for (unless the chain is paused, for everyone or in its merchant's world, or
    its merchant turned the autopilot off), and the sweeps apply them at once. Returns how many
    transactions moved."""
    seconds = settings.SANDBOX_AUTOPILOT_SECONDS
    if seconds <= 0:
        return 0
    now = clock.now()
    moved = 0
    for chain in CHAINS:
        if chain in settings.CRYPTO_PAUSED_CHAINS:
            continue
        required = min_confirmations(chain)
        moved += (
            SandboxChainTransfer.objects.filter(
                chain=chain,
                dropped=False,
                confirmations__lt=required,
                updated_at__lte=now - timedelta(seconds=seconds),
            )
            .exclude(_held_for_its_merchant(chain))
            .update(confirmations=required, updated_at=now)
        )
    crypto_deposits_sweep()
    crypto_withdrawals_sweep_sent()
    solana_accounts_sweep()
    return moved
