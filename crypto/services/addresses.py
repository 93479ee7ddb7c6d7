"""Deposit addresses: one HD allocation per (merchant, end user), and Solana token accounts that
open on request (pending until the chain has created them), close once emptied, and close again
when a transfer re-creates one closed here."""

from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from core import clock
from core.errors import DomainError
from core.handoffs import Handoff, handoff_on_commit
from core.services import staff_action_record
from core.staff import Staff
from crypto.chains import get_chains
from crypto.chains.base import AccountState, ChainError
from crypto.chains.evm import evm_served_chains
from crypto.chains.solana import solana_served
from crypto.keys import associated_token_account, evm_address, solana_owner
from crypto.models import AddressAllocation, ChainLock, CryptoDeposit, SolanaTokenAccount
from crypto.networks import (
    EVM_CHAINS,
    SOL,
    TOKENS,
    min_confirmations,
    min_deposit_cents,
    network,
)
from crypto.representations import DepositAddress
from crypto.selectors import allocation_find
from crypto.services.common import chain_status, crypto_access_check, now_ms
from merchants.models import Merchant

# An emptied Solana token account closed (its rent back), after the sweep that emptied it.
TOKEN_ACCOUNT_CLOSE = Handoff("crypto.close_token_account")

Status = SolanaTokenAccount.Status


def allocation_get(*, merchant: Merchant, platform_id: str) -> AddressAllocation:
    """The user's allocation, created with its addresses on first use."""
    allocation = allocation_find(merchant=merchant, platform_id=platform_id)
    if allocation is not None and allocation.evm_address:
        return allocation
    with transaction.atomic():
        allocation, _ = AddressAllocation.objects.get_or_create(
            merchant=merchant, platform_id=platform_id, defaults={"created_at": now_ms()}
        )
        if not allocation.evm_address:
            # Derived from the row's id; a racing twin derives the same two addresses.
            index = allocation.pk
            AddressAllocation.objects.filter(pk=index, evm_address__isnull=True).update(
                evm_address=evm_address(index), solana_owner=solana_owner(index)
            )
            allocation.refresh_from_db()
    return allocation


def _account_claim(allocation: AddressAllocation, token: str) -> SolanaTokenAccount:
    """The token's account row, (re)opened here when missing or closed, within capacity."""
    account = SolanaTokenAccount.objects.filter(allocation=allocation, token=token).first()
    if account is not None and account.status != Status.CLOSED:
        return account
    assert allocation.solana_owner is not None
    mint = network(SOL).token(token).contract
    with transaction.atomic():
        ChainLock.objects.get_or_create(chain=SOL)
        # Every opening takes this row's lock, so two cannot both take the last free slot.
        ChainLock.objects.select_for_update(no_key=True).get(chain=SOL)
        account = SolanaTokenAccount.objects.filter(allocation=allocation, token=token).first()
        if account is not None and account.status != Status.CLOSED:
            return account
        held = SolanaTokenAccount.objects.exclude(status=Status.CLOSED).count()
        if held >= settings.CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS:
            raise DomainError("ONCHAIN_ADDRESS_CAPACITY")
        account, _ = SolanaTokenAccount.objects.update_or_create(
            allocation=allocation,
            token=token,
            defaults={
                "mint": mint,
                "address": associated_token_account(owner=allocation.solana_owner, mint=mint),
                "status": Status.PENDING,
                "open_requested_at": None,
                "close_pending": False,
                "opened_at": None,
                "closed_at": None,
                "updated_at": clock.now(),
            },
        )
    return account


def solana_account_progress(*, account: SolanaTokenAccount) -> SolanaTokenAccount:
    """Ask the chain whether a pending account is open, and to open it when nothing is opening
    it (first, or after a lost or failed opening). Network I/O."""
    if account.status != Status.PENDING:
        return account
    chains = get_chains()
    try:
        state = chains.token_account_state(address=account.address)
        if state in (AccountState.MISSING, AccountState.CLOSED):
            chains.token_account_open(
                owner=account.allocation.solana_owner or "",
                mint=account.mint,
                address=account.address,
            )
            SolanaTokenAccount.objects.filter(
                pk=account.pk, status=Status.PENDING, open_requested_at__isnull=True
            ).update(open_requested_at=clock.now())
    except ChainError:
        return account  # the sweep asks again
    if state == AccountState.OPEN:
        now = clock.now()
        SolanaTokenAccount.objects.filter(pk=account.pk, status=Status.PENDING).update(
            status=Status.ACTIVE, opened_at=now, updated_at=now
        )
    account.refresh_from_db()
    return account


def deposit_address_get(
    *, merchant: Merchant, platform_id: str, chain: str, token: str
) -> DepositAddress:
    """The user's deposit address on ``chain``; on Solana, the account of ``token`` is opened."""
    crypto_access_check(merchant=merchant)
    allocation = allocation_get(merchant=merchant, platform_id=platform_id)
    net = network(chain)
    live = chain_status(chain, merchant_id=merchant.pk)
    unopened = DepositAddress(
        platform_id=platform_id,
        chain=chain,
        network=net.name,
        testnet=net.testnet,
        status="pending",
        address=None,
        token_account=None,
        tokens=[],
        min_deposit_cents=min_deposit_cents(chain),
        min_confirmations=min_confirmations(chain),
        explorer_url=None,
    )
    if chain in EVM_CHAINS:
        address = allocation.evm_address or ""
        return replace(
            unopened,
            status=live,
            address=address,
            tokens=list(net.tokens.values()),
            explorer_url=net.explorer.format(address=address),
        )
    account = solana_account_progress(account=_account_claim(allocation, token))
    open_tokens = set(
        SolanaTokenAccount.objects.filter(allocation=allocation, status=Status.ACTIVE).values_list(
            "token", flat=True
        )
    )
    tokens = [net.token(symbol) for symbol in TOKENS if symbol in open_tokens]
    if account.status != Status.ACTIVE:
        return replace(unopened, tokens=tokens)
    owner = allocation.solana_owner or ""
    return replace(
        unopened,
        status=live,
        address=owner,
        token_account=account.address,
        tokens=tokens,
        explorer_url=net.explorer.format(address=owner),
    )


def _closing(accounts: QuerySet[SolanaTokenAccount], address: str) -> bool:
    """Close these rows here, a new round of closing (``closed_at``); the chain closes the
    account after commit."""
    now = clock.now()
    closed = accounts.update(
        status=Status.CLOSED, close_pending=True, closed_at=now, updated_at=now
    )
    if closed:
        handoff_on_commit(TOKEN_ACCOUNT_CLOSE, address)
    return bool(closed)


def solana_account_close_if_emptied(*, deposit: CryptoDeposit) -> bool:
    """In a completed deposit's transaction: the service sweeps the account, so it closes,
    unless another deposit to it is still in flight. The chain closes it after commit."""
    if deposit.chain != SOL or not deposit.token_account:
        return False
    in_flight = (
        CryptoDeposit.objects.filter(
            token_account=deposit.token_account,
            status__in=[CryptoDeposit.Status.PENDING, CryptoDeposit.Status.FROZEN],
        )
        .exclude(pk=deposit.pk)
        .exists()
    )
    if in_flight:
        return False
    active = SolanaTokenAccount.objects.filter(address=deposit.token_account, status=Status.ACTIVE)
    return _closing(active, deposit.token_account)


def solana_account_reclose(*, deposit: CryptoDeposit) -> bool:
    """In the transaction that records a new deposit: a transfer into an account closed here
    means the chain has the account again (the sender's wallet re-created it to pay into it),
    so it closes again, its tokens swept with the rest whatever becomes of the deposit. The new
    round makes a closing step that read the chain before this transfer record nothing."""
    if deposit.chain != SOL or not deposit.token_account:
        return False
    closed = SolanaTokenAccount.objects.filter(address=deposit.token_account, status=Status.CLOSED)
    return _closing(closed, deposit.token_account)


def solana_account_close(*, address: str) -> None:
    """Sweep and close on the chain an account closed here (one step: the chain may take a
    while; the sweep comes back until it says closed). Network I/O."""
    account = SolanaTokenAccount.objects.filter(
        address=address, status=Status.CLOSED, close_pending=True
    ).first()
    if account is None:
        return
    try:
        state = get_chains().token_account_close(address=address)
    except ChainError:
        return  # the sweep tries again
    if state == AccountState.CLOSED:
        # For the round it read only: a transfer recorded meanwhile may have landed after the
        # chain answered, and renewed the round.
        SolanaTokenAccount.objects.filter(
            pk=account.pk, status=Status.CLOSED, close_pending=True, closed_at=account.closed_at
        ).update(close_pending=False)


def solana_accounts_sweep() -> int:
    """Move on what a lost request left: accounts still opening, accounts still to close."""
    moved = 0
    for account in SolanaTokenAccount.objects.filter(status=Status.PENDING).select_related(
        "allocation"
    )[:500]:
        moved += solana_account_progress(account=account).status == Status.ACTIVE
    for address in SolanaTokenAccount.objects.filter(
        status=Status.CLOSED, close_pending=True
    ).values_list("address", flat=True)[:500]:
        solana_account_close(address=address)
        moved += 1
    return moved


# Staff's sweeps of deposit addresses, started by a worker (the chain is asked first).
ADDRESS_SWEEP = Handoff("crypto.evm_sweep_address")
ACCOUNT_SWEEP = Handoff("crypto.solana_sweep_account")


def allocation_sweep_request(
    *, allocation: AddressAllocation, staff: Staff, accounts: list[SolanaTokenAccount] | None = None
) -> str:
    """Staff ask for a deposit address's tokens to go to the hot wallet now, whatever their
    amount: on every EVM chain served, each token at its address; on Solana, each of its open
    token accounts (or only ``accounts``). A worker starts each sweep after the commit (the
    chain is asked first); the request is recorded with who asked and why. Returns what was
    asked for."""
    evm = bool(evm_served_chains()) and bool(allocation.evm_address)
    if accounts is None:
        accounts = (
            list(allocation.token_accounts.filter(status=SolanaTokenAccount.Status.ACTIVE))
            if solana_served()
            else []
        )
    elif not solana_served():
        accounts = []
    if not evm and not accounts:
        raise DomainError(
            "ONCHAIN_DISABLED", "No real chain with this address's tokens is served here."
        )
    with transaction.atomic():
        staff_action_record(
            staff=staff,
            action="sweep_address",
            subject_type="address_allocation",
            subject_id=str(allocation.pk),
            evm_chains=list(evm_served_chains()) if evm else [],
            token_accounts=[account.address for account in accounts],
        )
        if evm:
            handoff_on_commit(ADDRESS_SWEEP, str(allocation.pk))
        for account in accounts:
            handoff_on_commit(ACCOUNT_SWEEP, str(account.pk))
    asked = [f"EVM ({', '.join(evm_served_chains())})"] if evm else []
    asked += [f"Solana {account.token} account" for account in accounts]
    return "Sweeps requested: " + ", ".join(asked) + "."
