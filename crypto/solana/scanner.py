"""The Solana deposit scanner: transfers into deposit token accounts, found with
``getSignaturesForAddress`` from a cursor kept per account and read with ``getTransaction``
(jsonParsed), both at the service's commitment (CRYPTO_SOLANA_COMMITMENT, finalized by default);
each deposit goes to ``observe`` (the deposit service, given by the task that runs the scan).

A scan pages back from the newest signature to the cursor (``until``), then hands the
transactions on oldest first: each one's token balances before and after say what the account
received (an account created in the transaction has no balance before it: zero), credited once
per (signature, account) by the deposit service; the cursor moves past each signature with
compare-and-set once it was handed on. A restart in the middle reads from the cursor again: the
signatures handed on are not read again, the rest are, none twice and none skipped. A
transaction that failed moved no tokens; one that took tokens out (a sweep) is no deposit.

Accounts scanned: those opening or open, those closed here whose closing the chain has not
done yet, and those closed within the last hour (a transfer can land before the closing
does). Each waits CRYPTO_SOLANA_SCAN_SECONDS of service clock between two scans. A closed
account past its hour is looked at every five minutes, a hundred to a ``getMultipleAccounts``:
one the chain has again (a wallet re-created it to pay into it, as Phantom and exchanges do for
a missing associated token account) is scanned as an open one, and what it received closes it
again (the deposit service)."""

import logging
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import F, Q
from spl.token.constants import TOKEN_PROGRAM_ID

from core import clock
from crypto.chains.base import ChainError, DepositObserver, DepositTarget
from crypto.models import SolanaTokenAccount
from crypto.networks import SOL, min_confirmations
from crypto.solana.models import SolanaCursor
from crypto.solana.node import (
    MULTIPLE_ACCOUNTS,
    SignatureInfo,
    SignatureNotFoundError,
    SolanaNode,
    TokenTransaction,
    solana_node,
)

logger = logging.getLogger(__name__)

AccountStatus = SolanaTokenAccount.Status
CLOSED_WATCH = timedelta(hours=1)
CLOSED_LOOK = timedelta(minutes=5)
ACCOUNTS_PER_RUN = 200
LOOKS_PER_RUN = 1_000
TOKEN_PROGRAM = str(TOKEN_PROGRAM_ID)


def _newer_signatures(
    node: SolanaNode, address: str, until: str, until_slot: int | None
) -> list[SignatureInfo]:
    """Every signature of the account newer than ``until``, oldest first. A node that cannot
    find ``until`` (its ledger no longer holds it, or it is behind the node that served it) is
    read back to that signature's slot instead: what that slot holds comes again, and the
    deposit service takes each repeat for what it is."""
    try:
        return _listed(node, address, until=until, floor=None)
    except SignatureNotFoundError:
        if not until or until_slot is None:
            raise
        logger.info(
            "SOL %s: the node has no %s; reading back to slot %s", address, until, until_slot
        )
        return _listed(node, address, until="", floor=until_slot)


def _listed(
    node: SolanaNode, address: str, *, until: str, floor: int | None
) -> list[SignatureInfo]:
    page_size = max(1, min(settings.CRYPTO_SOLANA_SCAN_PAGE, 1000))
    found: list[SignatureInfo] = []
    before = ""
    while True:
        page = node.signatures(
            address,
            commitment=settings.CRYPTO_SOLANA_COMMITMENT,
            until=until,
            before=before,
            limit=page_size,
        )
        found += [info for info in page if floor is None or info.slot >= floor]
        if len(page) < page_size or (floor is not None and page[-1].slot < floor):
            return found[::-1]
        before = page[-1].signature


def _received(account: SolanaTokenAccount, found: TokenTransaction) -> tuple[int, Decimal, str]:
    """(account index, tokens the account received, sender) of a transaction; 0 tokens when it
    received none. The sender is the owner of the account of the same mint that lost the most."""
    if account.address not in found.account_keys:
        return 0, Decimal(0), ""
    index = found.account_keys.index(account.address)
    changes: dict[int, int] = {}
    decimals = 0
    owners: dict[int, str] = {}
    for sign, balances in ((-1, found.pre), (1, found.post)):
        for balance in balances:
            if balance.mint != account.mint:
                continue
            changes[balance.account_index] = (
                changes.get(balance.account_index, 0) + sign * balance.amount
            )
            owners[balance.account_index] = balance.owner or owners.get(balance.account_index, "")
            decimals = balance.decimals
    received = changes.get(index, 0)
    if received <= 0:
        return index, Decimal(0), ""
    losers = sorted((change, i) for i, change in changes.items() if i != index and change < 0)
    sender = owners.get(losers[0][1], "") if losers else ""
    return index, Decimal(received).scaleb(-decimals), sender


def _observe(account: SolanaTokenAccount, found: TokenTransaction, observe: DepositObserver) -> int:
    index, amount, sender = _received(account, found)
    if amount <= 0:
        return 0
    allocation = account.allocation
    observe(
        chain=SOL,
        token=account.token,
        target=DepositTarget(allocation, allocation.solana_owner or "", account.address),
        tx_hash=found.signature,
        event_index=index,
        from_address=sender,
        amount_crypto=amount,
        # Read at the service's commitment: as final as the chain makes it.
        confirmations=min_confirmations(SOL),
    )
    return 1


def solana_account_scan(
    *, account: SolanaTokenAccount, node: SolanaNode, observe: DepositObserver
) -> int:
    """Read the account's new signatures and hand on its deposits; returns how many. Network
    I/O, then one short transaction per deposit and per cursor move."""
    cursor, _ = SolanaCursor.objects.get_or_create(
        account=account, defaults={"next_scan_at": clock.now()}
    )
    seen = cursor.last_signature
    observed = 0
    try:
        for info in _newer_signatures(node, account.address, seen, cursor.last_slot):
            if not info.failed:
                found = node.transaction(
                    info.signature, commitment=settings.CRYPTO_SOLANA_COMMITMENT
                )
                if found is None:
                    break  # listed but not served yet: the next scan reads it again
                if not found.failed:
                    observed += _observe(account, found, observe)
            moved = SolanaCursor.objects.filter(pk=account.pk, last_signature=seen).update(
                last_signature=info.signature, last_slot=info.slot
            )
            if not moved:
                break  # a twin scan moved it: it goes on from there
            seen = info.signature
    finally:
        now = clock.now()
        SolanaCursor.objects.filter(pk=account.pk).update(
            scanned_at=now,
            next_scan_at=now + timedelta(seconds=settings.CRYPTO_SOLANA_SCAN_SECONDS),
        )
    return observed


def _reappeared(node: SolanaNode, now: datetime) -> list[SolanaTokenAccount]:
    """The closed accounts past their hour whose look is due, asked whether the chain has them
    (a batch per call); each is looked at again ``CLOSED_LOOK`` later. Returns those the chain
    has again: a wallet created one again to pay into it."""
    dormant = list(
        SolanaTokenAccount.objects.filter(
            status=AccountStatus.CLOSED, close_pending=False, closed_at__lt=now - CLOSED_WATCH
        )
        .filter(Q(cursor__isnull=True) | Q(cursor__next_scan_at__lte=now))
        .select_related("allocation__merchant")
        .order_by(F("cursor__next_scan_at").asc(nulls_first=True), "pk")[:LOOKS_PER_RUN]
    )
    SolanaCursor.objects.bulk_create(
        [SolanaCursor(account=account, next_scan_at=now) for account in dormant],
        ignore_conflicts=True,
    )
    back: list[SolanaTokenAccount] = []
    for start in range(0, len(dormant), MULTIPLE_ACCOUNTS):
        batch = dormant[start : start + MULTIPLE_ACCOUNTS]
        owners = node.account_owners([account.address for account in batch])
        SolanaCursor.objects.filter(account__in=batch).update(next_scan_at=now + CLOSED_LOOK)
        back += [a for a, owner in zip(batch, owners, strict=True) if owner == TOKEN_PROGRAM]
    return back


def solana_deposits_scan(*, observe: DepositObserver) -> int:
    """Scan the watched accounts whose turn came, and the closed ones the chain has again;
    returns the deposits handed on. An account whose node call fails waits for the next run; a
    node that says it is behind, the whole run."""
    node = solana_node()
    node.health()
    now = clock.now()
    watched = SolanaTokenAccount.objects.filter(
        Q(status__in=[AccountStatus.PENDING, AccountStatus.ACTIVE])
        | Q(close_pending=True)
        | Q(closed_at__gte=now - CLOSED_WATCH)
    )
    due = (
        watched.filter(Q(cursor__isnull=True) | Q(cursor__next_scan_at__lte=now))
        .select_related("allocation__merchant")
        .order_by(F("cursor__next_scan_at").asc(nulls_first=True), "pk")[:ACCOUNTS_PER_RUN]
    )
    observed = sum(_scanned(account, node, observe) for account in due)
    try:
        back = _reappeared(node, now)
    except ChainError as exc:
        logger.warning("SOL look at closed accounts stopped: %s", exc)
        back = []
    return observed + sum(_scanned(account, node, observe) for account in back)


def _scanned(account: SolanaTokenAccount, node: SolanaNode, observe: DepositObserver) -> int:
    try:
        return solana_account_scan(account=account, node=node, observe=observe)
    except ChainError as exc:
        logger.warning("SOL scan of %s stopped: %s", account.address, exc)
        return 0
