"""The version of what a merchant's funding ledger shows: its rendered list pages are kept under
it (``ledger.selectors``), so a new or changed row is seen at once. Whatever writes a ledger
row (a funding, a staff credit or debit) bumps it once its transaction has committed."""

import uuid

from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from core.db import replica_aliases

# A version: a new random value, and with read replicas where the primary's WAL was once the
# write had committed (a page read from a replica is kept only if the replica had replayed that
# far); None without replicas.
LedgerVersion = tuple[str, str | None]


def ledger_version_key(merchant_id: object) -> str:
    """The cache key of the merchant's version, for a reader that reads it in one round trip
    with the page kept under it."""
    return f"ledger-version:{merchant_id}"


def ledger_version_bump(*, merchant_id: object) -> None:
    """A new version of the merchant's ledger once the current transaction commits (at once
    outside one). After the commit, so that a reader who sees the new version also sees the
    change: bumped before it, a reader could keep the old rows under the new version. Should the
    cache fail here, the write stands and the failure is logged (``robust``): the pages kept
    under the old version are then served until they expire (``ledger.selectors``, seconds)."""
    key = ledger_version_key(merchant_id)

    def bump() -> None:
        version: LedgerVersion = (uuid.uuid4().hex, _written_up_to())
        cache.set(key, version, timeout=None)

    transaction.on_commit(bump, robust=True)


def _written_up_to() -> str | None:
    """Where the primary's WAL is now, past the commit, when replicas serve reads."""
    primary = connections[DEFAULT_DB_ALIAS]
    if primary.vendor != "postgresql" or not replica_aliases():
        return None
    with primary.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
        row = cursor.fetchone()
    return str(row[0]) if row else None
