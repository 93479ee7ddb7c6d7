"""The database: the quick start's SQLite file, or PostgreSQL with its pool, a transaction
pooler in front of it, prepared statements and read replicas."""

from typing import Any

import dj_database_url

from config.settings.base import DATABASE_URL, QUICKSTART, VAR_DIR
from config.settings.environment import env_bool, env_int, env_list

# PostgreSQL is reached through a pooler in transaction mode (PgBouncer's pool_mode =
# transaction): no session state may outlive a transaction (docs/decisions.md, "Operations at
# scale"). Every SET and advisory lock of the service is transaction-scoped already; this also
# turns off the server-side cursors of QuerySet.iterator() and psycopg's prepared statements.
DATABASE_TRANSACTION_POOLING = env_bool("DATABASE_TRANSACTION_POOLING", False)
# Runs of one statement on a connection before psycopg prepares it there; 0: never (Django's
# client-side binding). Not used behind a transaction pooler (above).
DB_PREPARE_THRESHOLD = env_int("DB_PREPARE_THRESHOLD", 5)


def _databases() -> dict[str, Any]:
    if QUICKSTART:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        return {
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": VAR_DIR / "trading.sqlite3",
                "OPTIONS": {
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                    "transaction_mode": "IMMEDIATE",
                    "timeout": 20,
                },
            }
        }
    return {"default": _postgresql(DATABASE_URL)}


def _postgresql(url: str) -> dict[str, Any]:
    config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=0))
    if config["ENGINE"] != "django.db.backends.postgresql":
        return config
    options = config.setdefault("OPTIONS", {})
    if env_bool("DB_POOL", True):
        options["pool"] = {
            "min_size": env_int("DB_POOL_MIN_SIZE", 2),
            "max_size": env_int("DB_POOL_MAX_SIZE", 20),
            "timeout": env_int("DB_POOL_TIMEOUT", 10),
        }
    if DATABASE_TRANSACTION_POOLING:
        # Behind PgBouncer in transaction mode consecutive transactions may run on different
        # server connections: nothing may be prepared on one and used on another.
        options["prepare_threshold"] = None
        config["DISABLE_SERVER_SIDE_CURSORS"] = True
    elif DB_PREPARE_THRESHOLD:
        # Parameters sent apart from the statement (psycopg's server-side binding, not Django's
        # default of quoting them into the text) and each statement prepared on a connection
        # once it ran there this many times: PostgreSQL then neither parses nor plans it again.
        # A buy cost the database 45 % less CPU so (bench/README.md, "The buy, end to end").
        options["server_side_binding"] = True
        options["prepare_threshold"] = DB_PREPARE_THRESHOLD
    return config


DATABASES = _databases()


# Read replicas (streaming copies of the primary): heavy reads that may be a moment stale go to
# them (core.db.replica_reads: trade history pages, ledger lists, the market); everything that
# writes, or must see what was just written, stays on the primary.
def _replicas() -> dict[str, Any]:
    # TEST MIRROR: under pytest a replica is the test database itself, not one to create.
    return {
        f"replica{n}": _postgresql(u) | {"TEST": {"MIRROR": "default"}}
        for n, u in enumerate(env_list("DATABASE_REPLICA_URLS"))
    }


if not QUICKSTART:
    DATABASES |= _replicas()
DATABASE_ROUTERS = ["core.db.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
