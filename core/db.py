"""Database helpers: migration steps, locks, the connection pool after a failover, hand-written
reads of hot rows."""

import hashlib
import logging
import random
import time
from collections import namedtuple
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from copy import deepcopy
from typing import Any, Generic, TypeVar

from django.db import (
    DEFAULT_DB_ALIAS,
    IntegrityError,
    OperationalError,
    connection,
    connections,
    transaction,
)
from django.db.models import BaseConstraint, Field, Model
from django.db.models.expressions import Col

from core.json import json_copy
from core.metrics import DB_POOL

logger = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=Model)
# SQLSTATEs of a transaction PostgreSQL aborted so that others could go on: a deadlock, a
# serialization failure. Nothing of it was written; the same work run again can succeed.
TRANSACTION_CONFLICTS = frozenset({"40P01", "40001"})
CONFLICT_ATTEMPTS = 3


def on_postgresql(sql: str) -> Callable[[Any, Any], None]:
    """A RunPython body executing ``sql`` on PostgreSQL only (the quick start runs SQLite)."""

    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


@contextmanager
def snapshot_read() -> Iterator[None]:
    """Reads that must agree with each other (a statement's balances and its lines): one
    transaction, on PostgreSQL one snapshot (REPEATABLE READ, read only) when it is its own
    transaction. SQLite's transactions see one state already."""
    own = not connection.in_atomic_block
    with transaction.atomic():
        if own and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def advisory_lock(name: str) -> None:
    """Hold a transaction-scoped lock on ``name`` until the surrounding transaction ends: callers
    serialize on something that has no row of its own (one person's deposits, say). On SQLite,
    which the quick start runs, writers are serialized by the database already."""
    if connection.vendor != "postgresql":
        return
    key = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


# Read replicas (DATABASE_REPLICA_URLS): settings names them replica0, replica1, ...
REPLICA_PREFIX = "replica"
_read_alias: ContextVar[str] = ContextVar("read_alias", default=DEFAULT_DB_ALIAS)


def replica_aliases() -> list[str]:
    return [alias for alias in connections.settings if alias.startswith(REPLICA_PREFIX)]


@contextmanager
def replica_reads() -> Iterator[str]:
    """Reads in this block may be a moment stale (history pages, ledger lists, the market):
    they go to a read replica, when one is configured and no transaction is open on the primary
    (work that wrote must read what it wrote). The ORM follows ``ReplicaRouter``; hand-written
    SQL takes ``connections[alias]`` of the alias yielded (``read_alias()`` inside)."""
    replicas = replica_aliases()
    if not replicas or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        yield _read_alias.get()
        return
    token = _read_alias.set(random.choice(replicas))  # noqa: S311 (spreading load)
    try:
        yield _read_alias.get()
    finally:
        _read_alias.reset(token)


def read_alias() -> str:
    """The database the reads of this block go to: a replica inside ``replica_reads``."""
    return _read_alias.get()


class ReplicaRouter:
    """Settings' DATABASE_ROUTERS: reads inside ``replica_reads`` to its replica, everything
    else (every write, every other read) to the primary. Migrations run on the primary only;
    replicas are its streaming copies."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str:
        return _read_alias.get()

    def db_for_write(self, model: type[Model], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool:
        return True  # the replicas hold the primary's rows

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


def pooled_connections_recheck() -> None:
    """After a lost connection: test the pool's idle connections now and replace the dead ones.
    A failover cuts every connection at once; unchecked, each dead one would be lent to one more
    request and fail it. A no-op without a pool (SQLite, ``DB_POOL=false``)."""
    pool = getattr(connection, "pool", None)
    if pool is None:
        return
    try:
        pool.check()
    except Exception as exc:  # the database is still away: the next failure checks again
        logger.warning("connection pool check failed: %s", exc)


# The pools' use is read into the metrics at most this often per process (requests and tasks
# call ``db_pools_observe``; reading a pool's stats takes its lock).
POOL_OBSERVE_SECONDS = 1.0
_pools_observed_at = [0.0]


def db_pools_observe() -> None:
    """Record this process's connection pools (open, in use, waiting, max) in the metrics, at
    most once per ``POOL_OBSERVE_SECONDS``. A no-op without pools."""
    now = time.monotonic()
    if now - _pools_observed_at[0] < POOL_OBSERVE_SECONDS:
        return
    _pools_observed_at[0] = now
    for alias in connections:
        # The pools that exist: ``wrapper.pool`` would open one (with whatever settings hold
        # now, e.g. before a test database is made). Django keeps them per class and alias.
        pools = getattr(type(connections[alias]), "_connection_pools", {})
        pool = pools.get(alias)
        if pool is None:
            continue
        stats = pool.get_stats()
        size, available = stats.get("pool_size", 0), stats.get("pool_available", 0)
        DB_POOL.labels(alias, "size").set(size)
        DB_POOL.labels(alias, "in_use").set(size - available)
        DB_POOL.labels(alias, "waiting").set(stats.get("requests_waiting", 0))
        DB_POOL.labels(alias, "max").set(stats.get("pool_max", 0))


class ModelRows(Generic[M]):
    """Instances of ``model`` from a hand-written SELECT of its columns, converted as the ORM
    converts them. For the few queries every request makes (its API key, its merchant's
    secrets): compiling those through the ORM took three times as long as running them."""

    def __init__(self, model: type[M], only: Sequence[str] = ()) -> None:
        """Every column of ``model``, or ``only`` these fields' (with the primary key, an
        instance whose other fields are deferred). Either way in the model's order, which
        ``Model.from_db`` takes the values of a partial row in."""
        self.model = model
        named = {self._field(name) for name in only}
        self.fields = [f for f in model._meta.concrete_fields if not only or f in named]
        self.width = len(self.fields)
        self._attnames = [field.attname for field in self.fields]
        self._converters: dict[str, list[tuple[int, Col, list[Callable[..., Any]]]]] = {}
        self._record: Any = namedtuple(f"{model.__name__}Row", self._attnames)  # type: ignore[misc]

    def index(self, attname: str) -> int:
        """Where a field's value is in a row of ``columns``."""
        return self._attnames.index(attname)

    def columns(self, alias: str) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{alias}.{quote(field.column)}" for field in self.fields)

    def table(self, alias: str = "") -> str:
        return f"{connection.ops.quote_name(self.model._meta.db_table)} {alias}".rstrip()

    def quoted(self, fields: list[str]) -> list[str]:
        """The quoted columns of these fields."""
        return [connection.ops.quote_name(self._field(name).column) for name in fields]

    def param(self, name: str, value: Any) -> Any:
        return self._field(name).get_db_prep_value(value, connection)

    def params(self, fields: Sequence[str], values: Sequence[Any]) -> list[Any]:
        """``param`` of each field with its value, in order."""
        return [self.param(name, value) for name, value in zip(fields, values, strict=True)]

    def insert(self, fields: Sequence[str]) -> str:
        """``INSERT INTO`` the table, these fields' columns and a placeholder for each value:
        the start of a hand-written insert (an ``ON CONFLICT`` or ``RETURNING`` may follow)."""
        return (
            f"INSERT INTO {self.table()} ({', '.join(self.quoted(list(fields)))})"  # noqa: S608
            f" VALUES ({', '.join(['%s'] * len(fields))})"
        )

    def _field(self, name: str) -> "Field[Any, Any]":
        field = self.model._meta.get_field(name)
        assert isinstance(field, Field)
        return field

    def build(self, values: Sequence[Any]) -> Any:
        return self.instance(self.converted(values))

    def recorder(self) -> Callable[[Sequence[Any]], Any]:
        """Rows to named tuples of their converted values with the model's attribute names:
        what a page of many rows renders from, without a model instance for each. The
        connection and its converters are looked up once (``connection`` is a thread-local
        proxy: looked up per row, it cost a tenth of a trade page)."""
        db = connections[DEFAULT_DB_ALIAS]
        converting = self._for_connection()
        make, width = self._record._make, self.width

        def record(values: Sequence[Any]) -> Any:
            if len(values) != width:
                raise ValueError(f"{len(values)} values for {width} columns")
            converted = list(values)
            for index, column, converters in converting:
                value = converted[index]
                for convert in converters:
                    value = convert(value, column, db)
                converted[index] = value
            return make(converted)

        return record

    def converted(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """A row's values as the model's fields hold them."""
        if len(values) != self.width:
            raise ValueError(f"{len(values)} values for {self.width} columns")
        converted = list(values)
        for index, column, converters in self._for_connection():
            value = converted[index]
            for convert in converters:
                value = convert(value, column, connection)
            converted[index] = value
        return tuple(converted)

    def instance(self, converted: Sequence[Any]) -> M:
        """A new instance from converted values (kept, say, across requests): JSON lists and
        objects are copied, so a change to one instance never reaches another."""
        return self.model.from_db(
            DEFAULT_DB_ALIAS,
            self._attnames,
            [json_copy(v) if isinstance(v, (dict, list)) else v for v in converted],
        )

    def _for_connection(self) -> list[tuple[int, Col, list[Callable[..., Any]]]]:
        """The columns whose values need converting (by position), with their converters."""
        if connection.vendor not in self._converters:
            columns = [field.get_col(self.model._meta.db_table) for field in self.fields]
            converting = [
                (
                    index,
                    column,
                    connection.ops.get_db_converters(column) + column.get_db_converters(connection),
                )
                for index, column in enumerate(columns)
            ]
            self._converters[connection.vendor] = [c for c in converting if c[2]]
        return self._converters[connection.vendor]


def row_lock(*, of: str = "") -> str:
    """The clause that locks the rows a hand-written SELECT reads, as the ORM's
    ``select_for_update(no_key=True, of=...)`` writes it (``of``: a quoted table or alias);
    nothing where the database has no row locks (SQLite: the quick start)."""
    if not connection.features.has_select_for_no_key_update:
        return ""
    return f" FOR NO KEY UPDATE OF {of}" if of else " FOR NO KEY UPDATE"


class ChangesSaved:
    """A model whose instances remember the values they were loaded with, so that
    ``changes_save`` writes only the columns that changed: a trade has 35, and building and
    compiling its full-row UPDATE for the two or three a move changes was a large part of a
    move's CPU (bench/README.md, "The buy, end to end"). Django's own pattern ("Customizing
    model loading", ``Model.from_db``); a plain mixin put before ``Model``, since this module is
    imported before the app registry is ready."""

    @classmethod
    def from_db(cls, db: str | None, field_names: Any, values: Any) -> Any:
        instance = super().from_db(db, field_names, values)  # type: ignore[misc]
        instance._loaded = _snapshot(dict(zip(field_names, values, strict=True)))
        return instance


def _snapshot(values: dict[str, Any]) -> dict[str, Any]:
    # A JSON value is copied: changed in place, it must still compare unequal to what was loaded.
    return {k: deepcopy(v) if isinstance(v, (dict, list)) else v for k, v in values.items()}


def changes_save(instance: Model) -> None:
    """Save ``instance``: a new one whole (an INSERT), a loaded one only in the columns whose
    values differ from those it was loaded (or last saved) with. A deferred column never read
    is left alone; one assigned is written."""
    loaded: dict[str, Any] | None = getattr(instance, "_loaded", None)
    fields = [f for f in instance._meta.concrete_fields if not f.primary_key]
    if loaded is None or instance._state.adding:
        instance.save()
    else:
        held = instance.__dict__
        changed = [
            f.attname
            for f in fields
            if f.attname in held
            and (f.attname not in loaded or held[f.attname] != loaded[f.attname])
        ]
        if changed:
            instance.save(update_fields=changed)
    held = instance.__dict__
    instance._loaded = _snapshot(  # type: ignore[attr-defined]
        {f.attname: held[f.attname] for f in fields if f.attname in held}
    )


def transaction_conflict(exc: BaseException) -> bool:
    """A deadlock or a serialization failure: the transaction was rolled back, not lost."""
    return getattr(exc.__cause__, "sqlstate", None) in TRANSACTION_CONFLICTS


def atomic_retried(work: Callable[[], T], *, attempts: int = CONFLICT_ATTEMPTS) -> T:
    """``work()`` in a transaction of its own, run again (``attempts`` times in all) when the
    database aborted it for a deadlock or a serialization failure. Only for work that does
    nothing but database writes (no network I/O): everything it did is rolled back, its
    on-commit callbacks dropped, before it runs again. Inside another transaction it runs once
    (that transaction is aborted with it)."""
    for attempt in range(1, attempts + 1):
        try:
            with transaction.atomic():
                return work()
        except OperationalError as exc:
            nested = connection.in_atomic_block
            if attempt == attempts or nested or not transaction_conflict(exc):
                raise
            logger.warning("transaction conflict (attempt %d of %d): %s", attempt, attempts, exc)
    raise AssertionError("unreachable: the last attempt returns or raises")


def model_constraint(model: type[Model], name: str) -> BaseConstraint:
    """One of ``model``'s Meta constraints, by name: a name the model does not declare (a typo,
    a constraint renamed) fails where the module naming it is imported, not as a refusal that
    silently stops being recognised."""
    for constraint in model._meta.constraints:
        if constraint.name == name:
            return constraint
    raise LookupError(f"{model.__name__} declares no constraint {name!r}")


def constraint_violated(
    exc: IntegrityError, model: type[Model], constraint: BaseConstraint
) -> bool:
    """Whether the database refused a write by ``constraint`` of ``model``. PostgreSQL names the
    constraint (psycopg's diagnostics); SQLite (the quick start) names a unique constraint's
    columns instead, which are derived here from the same constraint."""
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None:
        return bool(diag.constraint_name == constraint.name)
    columns = {field.name: field.column for field in model._meta.concrete_fields}
    fields = getattr(constraint, "fields", ())
    named = ", ".join(f"{model._meta.db_table}.{columns[field]}" for field in fields)
    return bool(named) and f"UNIQUE constraint failed: {named}" in str(exc)


def row_upsert(model: type[M], *, keys: dict[str, Any], values: dict[str, Any]) -> M:
    """The row of ``model`` with ``keys`` (its unique fields), created or set to ``values``, as
    it is after this write. One ``INSERT ... ON CONFLICT DO UPDATE``: a concurrent insert or
    delete of the same row cannot make it fail, as ``update_or_create``'s read, then write, does
    (it answered an IntegrityError when a reset deleted the row between its two steps). The row
    is read back in the same transaction, which the write keeps it locked for. ``values`` may be
    empty: the row is then only made to exist."""
    with transaction.atomic():
        model._default_manager.bulk_create(
            [model(**keys, **values)],
            update_conflicts=True,
            unique_fields=list(keys),
            update_fields=list(values or keys),
        )
        return model._default_manager.get(**keys)
