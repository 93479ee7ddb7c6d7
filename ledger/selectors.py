"""Reads of the funding ledger (contract 4.12): a merchant's fundings and its staff credits and
debits, newest first, merged by UNION ALL queries over two index ranges; the list's pages kept
rendered under the merchant's ledger version (``core.ledger_version``)."""

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.core.cache import cache
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    connection,
    connections,
    models,
    transaction,
)
from django.db.models import F, Min, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Abs, Cast

from core import clock
from core.db import ModelRows, read_alias, replica_reads
from core.errors import DomainError
from core.json import dumps
from core.ledger_version import LedgerVersion, ledger_version_key
from ledger.models import ADMIN_KINDS, ADMIN_STATUS, INITIATED_VISIBLE_FOR, Funding
from ledger.representations import (
    LedgerPageOut,
    LedgerTransactionOut,
    ledger_page_json,
    ledger_transaction_json,
)
from merchants.models import Merchant
from wallet.models import Posting, Transfer

logger = logging.getLogger(__name__)

# A history read that takes longer is cut off and answered with SERVER_ERROR (retry).
STATEMENT_TIMEOUT_MS = 5000

# Filtering by these types leaves staff credits and debits out (contract 4.12); filtering by an
# admin kind (ADMIN_CREDIT, ADMIN_DEBIT) leaves every funding out.
TYPES_WITHOUT_ADMIN_ROWS = (Funding.Type.DEPOSIT, Funding.Type.WITHDRAWAL)

# The columns of a ledger row, as both sides (fundings, staff transfers) read them.
ROW_COLUMNS = (
    "id",
    "type",
    "status",
    "amount_usd",
    "amount_crypto",
    "token",
    "chain",
    "fee",
    "address",
    "txn_hash",
    "created_at",
    "updated_at",
    "completed_at",
)


@dataclass(frozen=True)
class LedgerQuery:
    type: str | None = None
    status: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    limit: int = 50
    offset: int = 0


def _created_between(rows: QuerySet[Any], query: LedgerQuery) -> QuerySet[Any]:
    if query.start is not None:
        rows = rows.filter(created_at__gte=query.start)
    if query.end is not None:
        rows = rows.filter(created_at__lte=query.end)
    return rows


def _fundings(*, merchant: Merchant, query: LedgerQuery, now: datetime) -> QuerySet[Any]:
    rows = Funding.objects.filter(merchant=merchant).exclude(
        status=Funding.Status.INITIATED, created_at__lt=now - INITIATED_VISIBLE_FOR
    )
    if query.type is not None:
        rows = rows.filter(type=query.type)
    if query.status is not None:
        rows = rows.filter(status=query.status)
    return _created_between(rows, query)


def _column(model: type[models.Model], name: str) -> "models.Field[Any, Any]":
    """``model.name``'s field, so a constant casts to that column's exact type."""
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


def _admin_transfers(*, merchant: Merchant, query: LedgerQuery) -> QuerySet[Any]:
    """Staff credits and debits of the merchant (their cause names it)."""
    kinds = [query.type] if query.type in ADMIN_KINDS else ADMIN_KINDS
    rows = Transfer.objects.filter(cause_type="admin", cause_id=str(merchant.pk), kind__in=kinds)
    return _created_between(rows, query)


def _ledger_rows(rows: QuerySet[Any]) -> QuerySet[Any]:
    """Fundings or staff transfers as ledger rows. A transfer is always POSTED; its amount is
    the size of its postings; the constants are cast to the funding columns' types, so its
    values read back as a funding's would. Shaped only where the rows are read, not for the
    page's ids and the count: the annotations cost more to build and compile than the rest."""
    if rows.model is Funding:
        return rows.values(*ROW_COLUMNS)
    posted = Posting.objects.filter(transfer=OuterRef("pk")).values("amount")[:1]
    text = {name: Cast(Value(""), _column(Funding, name)) for name in ("token", "chain")}
    rows = rows.annotate(
        type=Cast(F("kind"), _column(Funding, "type")),
        status=Cast(Value(ADMIN_STATUS), _column(Funding, "status")),
        amount_usd=Abs(Subquery(posted)),
        amount_crypto=Cast(Value(0), _column(Funding, "amount_crypto")),
        fee=Cast(Value(0), _column(Funding, "fee")),
        address=Cast(Value(""), _column(Funding, "address")),
        txn_hash=Cast(Value(""), _column(Funding, "txn_hash")),
        updated_at=F("created_at"),
        completed_at=F("created_at"),
        **text,
    )
    return rows.values(*ROW_COLUMNS)


@contextmanager
def _readable() -> Iterator[None]:
    """Any database failure while reading becomes SERVER_ERROR (1006: the history could not be
    loaded, retry)."""
    try:
        yield
    except DatabaseError as exc:
        logger.warning("ledger history could not be loaded: %s", exc)
        raise DomainError("SERVER_ERROR") from exc


@contextmanager
def _history_read() -> Iterator[None]:
    """A read of the history, bounded in time and, when it is its own transaction, one snapshot
    (the page's ids, their rows and the count agree); SERVER_ERROR when it fails."""
    db = connections[read_alias()]  # a replica's, inside replica_reads
    own_transaction = not db.in_atomic_block
    with _readable(), transaction.atomic(using=db.alias):
        if db.vendor == "postgresql":
            # One round trip for both settings (a statement without parameters may hold several).
            with db.cursor() as cursor:
                cursor.execute(
                    (
                        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; "
                        if own_transaction
                        else ""
                    )
                    + f"SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS:d}"
                )
        yield


NEWEST_FIRST = ("-created_at", "-id")


def _union_all(sides: list[QuerySet[Any]]) -> QuerySet[Any]:
    first, *others = sides
    return first.union(*others, all=True) if others else first


def _page_ids(sides: list[QuerySet[Any]], *, offset: int, limit: int) -> list[uuid.UUID]:
    """The ids of the page, newest first, from the narrow (id, created) rows: each side is an
    index-only range. Each side of a union is cut to its own first ``offset + limit`` rows, so
    PostgreSQL merges the index ranges instead of sorting the whole history (it does not push
    an outer ORDER BY into the branches of a UNION ALL). SQLite (the quick start) allows no
    LIMIT inside a compound statement: there the union is sorted and cut as a whole."""
    end = offset + limit
    narrow = [side.values("id", "created_at").order_by(*NEWEST_FIRST) for side in sides]
    if len(narrow) == 1:
        rows = narrow[0]
    elif connection.features.supports_slicing_ordering_in_compound:
        rows = _union_all([side[:end] for side in narrow])
    else:
        rows = _union_all([side.order_by() for side in narrow])
    return [row["id"] for row in rows.order_by(*NEWEST_FIRST)[offset:end]]


def _rows_by_id(sides: list[QuerySet[Any]], ids: list[uuid.UUID]) -> dict[uuid.UUID, Any]:
    """The page's rows by id, side by side: the first side (the fundings, unless the query is
    for staff rows only) is read alone, the staff side only for the ids it left (a page of
    fundings is one plain statement, not a union of two to build and compile)."""
    found: dict[uuid.UUID, Any] = {}
    for side in sides:
        left = [row_id for row_id in ids if row_id not in found]
        if not left:
            break
        found.update((row["id"], row) for row in _ledger_rows(side.filter(id__in=left)))
    return found


def ledger_page(
    *, merchant: Merchant, query: LedgerQuery, now: datetime
) -> tuple[LedgerPageOut, datetime | None]:
    """One page of the merchant's ledger at ``now``, newest first (created, then id), with the
    number of rows matching the query; and until when it stays so (None: until a row changes),
    the first moment one of the INITIATED fundings it counts leaves the list. Read where
    ``read_alias`` points (the caller chooses). Three statements: the page's ids, their rows
    (two when the page mixes fundings and staff rows), the count (the first and the last read
    only narrow, index-covered columns); a fourth, over the last day of the fundings, when the
    page counts fundings."""
    sides: list[QuerySet[Any]] = []
    if query.type not in ADMIN_KINDS:
        sides.append(_fundings(merchant=merchant, query=query, now=now))
    if query.type not in TYPES_WITHOUT_ADMIN_ROWS:
        sides.append(_admin_transfers(merchant=merchant, query=query))
    with _history_read():
        ids = _page_ids(sides, offset=query.offset, limit=query.limit)
        found = _rows_by_id(sides, ids)
        total = query.offset + len(ids)
        # A page that is not full ends the list, unless it is past the end (count then).
        if len(ids) == query.limit or (not ids and query.offset):
            total = _union_all([side.values("id") for side in sides]).count()
        until = _first_leaving(sides[0], now=now) if sides[0].model is Funding else None
    page = [found[row_id] for row_id in ids]
    body = ledger_page_json(rows=page, total=total, limit=query.limit, offset=query.offset)
    return body, until


def _first_leaving(fundings: QuerySet[Any], *, now: datetime) -> datetime | None:
    """When the oldest INITIATED funding of these leaves the list (None: none is listed). A
    range of the last day of the merchant's index, whatever its history."""
    oldest = fundings.filter(
        status=Funding.Status.INITIATED, created_at__gte=now - INITIATED_VISIBLE_FOR
    ).aggregate(oldest=Min("created_at"))["oldest"]
    return None if oldest is None else oldest + INITIATED_VISIBLE_FOR


# A rendered page is served for this long at most. What it bounds: a version bump lost (the
# cache failed just after the write committed) and a page read from a replica that had not yet
# replayed the write are seen at most this late.
PAGE_TTL_SECONDS = 10


def ledger_page_rendered(*, merchant: Merchant, query: LedgerQuery) -> orjson.Fragment:
    """``ledger_page``'s body as JSON, kept per merchant and query under the merchant's ledger
    version (``core.ledger_version``, bumped by every write of a row once it committed): the
    version and the page are read in one round trip, and a page is served while it was read
    under the current version and the service clock is between its reading and the moment one
    of its INITIATED fundings leaves the list, so it is what ``ledger_page`` would answer. A
    request served a kept page cost 1.2-2 ms of CPU, one that reads, counts and renders it
    10-17 ms (bench/README.md, "The ledger reads")."""
    shape = [query.type, query.status, query.start, query.end, query.limit, query.offset]
    page_key = f"ledger-page:{merchant.pk}:" + "|".join(
        value.isoformat() if isinstance(value, datetime) else str(value) for value in shape
    )
    version_key = ledger_version_key(merchant.pk)
    found = cache.get_many([version_key, page_key])
    version: LedgerVersion | None = found.get(version_key)
    now = clock.now()
    kept = found.get(page_key)
    if kept is not None:
        kept_version, read_at, until, body = kept
        if kept_version == version and read_at <= now and (until is None or now < until):
            return orjson.Fragment(body)
    # A list may be a moment stale: a replica's, when there is one (a row by id is the
    # primary's); but a page is kept only once it holds the write of its version.
    with replica_reads() as alias:
        keep = version is None or _replayed(alias, version[1])
        page, until = ledger_page(merchant=merchant, query=query, now=now)
    body = dumps(page)
    if keep:
        cache.set(page_key, (version, now, until, body), timeout=PAGE_TTL_SECONDS)
    return orjson.Fragment(body)


def _replayed(alias: str, written: str | None) -> bool:
    """Whether the database behind ``alias`` holds everything written up to ``written`` (a
    position in the primary's WAL; None: there were no replicas then). Read before the page's
    snapshot, so the snapshot holds at least as much."""
    if alias == DEFAULT_DB_ALIAS or written is None:
        return True
    with _readable(), connections[alias].cursor() as cursor:
        # A database that is no standby (null) is the primary's whole copy.
        cursor.execute("SELECT coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, true)", [written])
        row = cursor.fetchone()
    return bool(row and row[0])


_FUNDINGS = ModelRows(Funding, only=ROW_COLUMNS)
# Built from model metadata once: the ORM's building and compiling of this one-row read cost
# more than the rest of the request (bench/README.md, "The ledger reads").
_FUNDING_SQL = (
    f"SELECT {_FUNDINGS.columns('f')} FROM {_FUNDINGS.table('f')}"  # noqa: S608
    " WHERE f.{} = %s AND f.{} = %s".format(*_FUNDINGS.quoted(["merchant", "id"]))
)


def ledger_transaction_get(
    *, merchant: Merchant, transaction_id: str
) -> LedgerTransactionOut | None:
    """The ledger row of one of the merchant's fundings; None for anything else (an admin row,
    another merchant's funding, an id that is not one). Read from the primary, bounded in time
    like the list, in one round trip: on PostgreSQL the time limit and the read are one message
    (its statements run as one transaction, to which ``SET LOCAL`` applies), the values bound
    into the text by the driver."""
    try:
        funding_id = uuid.UUID(transaction_id)
    except ValueError:
        return None
    params = [_FUNDINGS.param("merchant", merchant.pk), _FUNDINGS.param("id", funding_id)]
    with _readable(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # PostgreSQL's operations bind the values into the text (one message).
            read = connection.ops.compose_sql(_FUNDING_SQL, params)  # type: ignore[attr-defined]
            cursor.execute(f"SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS:d}; {read}")
            cursor.nextset()
        else:
            cursor.execute(_FUNDING_SQL, params)
        values = cursor.fetchone()
    if values is None:
        return None
    return ledger_transaction_json(_FUNDINGS.recorder()(values)._asdict())


def funding_of_source(*, source_type: str, source_id: str, type: str) -> Funding | None:
    """The funding mirroring a source (a crypto deposit, a cashout, ...), if it has one."""
    return Funding.objects.filter(source_type=source_type, source_id=source_id, type=type).first()
