"""The sandbox app is installed only with ``SANDBOX=true``: without it a freshly migrated
database has no sandbox table (PostgreSQL and the quick start's SQLite), and ``manage.py check``
warns about every outside system left unconfigured, as ``manage.py`` runs in a deployment."""

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from tests.faults.database import database_url

pytestmark = pytest.mark.slow

OUTSIDE_SYSTEMS = ("GAME_PLATFORM", "MARKETPLACE", "IDENTITY_PROVIDER", "CRYPTO_CHAINS")
UNCONFIGURED_WARNINGS = ("trading.W001", "trading.W002", "merchants.W001", "crypto.W001")


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def deployment_env(*, sandbox: bool, database: str | None, var_dir: Path, **extra: str) -> dict:
    """The environment of ``manage.py`` in a deployment: no outside system named, the HD key
    given (required outside the sandbox); without ``database`` the quick start's SQLite."""
    env = {name: value for name, value in os.environ.items() if name not in OUTSIDE_SYSTEMS}
    env.update(
        SANDBOX="true" if sandbox else "false",
        SECRET_KEY=settings.SECRET_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        CRYPTO_HD_MNEMONIC=settings.SANDBOX_HD_MNEMONIC,
        VAR_DIR=str(var_dir),
        LOG_LEVEL="WARNING",
    )
    if database is None:
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
    else:
        env.update(DATABASE_URL=database, REDIS_URL=settings.REDIS_URL)
    env.update(extra)
    return env


def sqlite_tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def postgres_tables(url: str) -> set[str]:
    with psycopg.connect(url) as db:
        rows = db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {row[0] for row in rows}


@pytest.fixture
def fresh_postgres() -> Iterator[str]:
    """An empty PostgreSQL database beside the test database, dropped afterwards."""
    server = database_url().rsplit("/", 1)[0]
    name = f"sandbox_off_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_postgresql_migrated_without_the_sandbox_has_no_sandbox_table(fresh_postgres, tmp_path):
    migrated = manage(
        "migrate",
        "--no-input",
        env=deployment_env(sandbox=False, database=fresh_postgres, var_dir=tmp_path),
    )
    assert migrated.returncode == 0, migrated.stderr

    tables = postgres_tables(fresh_postgres)
    assert {"trading_trade", "crypto_cryptodeposit", "merchants_merchant"} <= tables
    assert [table for table in tables if "sandbox" in table] == []


@pytest.mark.parametrize(("sandbox", "expected"), [(False, 0), (True, 13)])
def test_sqlite_quick_start_has_sandbox_tables_only_with_the_sandbox(tmp_path, sandbox, expected):
    env = deployment_env(sandbox=sandbox, database=None, var_dir=tmp_path)
    migrated = manage("migrate", "--no-input", env=env)
    assert migrated.returncode == 0, migrated.stderr

    tables = sqlite_tables(tmp_path / "trading.sqlite3")
    assert "trading_trade" in tables
    sandbox_tables = sorted(table for table in tables if "sandbox" in table)
    assert len(sandbox_tables) == expected, sandbox_tables
    assert all(table.startswith("sandbox_") for table in sandbox_tables)


def test_check_warns_about_each_unconfigured_outside_system(tmp_path):
    checked = manage(
        "check", env=deployment_env(sandbox=False, database=database_url(), var_dir=tmp_path)
    )
    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output
    for check_id in UNCONFIGURED_WARNINGS:
        assert check_id in output
    for answer in ("PLATFORM_UNAVAILABLE", "SERVICE_UNAVAILABLE", "VERIFICATION_NOT_AVAILABLE"):
        assert answer in output
    assert "ONCHAIN_DISABLED" in output


def test_check_is_quiet_with_the_sandbox_and_without_crypto(tmp_path):
    with_sandbox = manage(
        "check", env=deployment_env(sandbox=True, database=database_url(), var_dir=tmp_path)
    )
    assert with_sandbox.returncode == 0, with_sandbox.stderr
    assert "no issues" in with_sandbox.stdout

    without_crypto = manage(
        "check",
        env=deployment_env(
            sandbox=False, database=database_url(), var_dir=tmp_path, CRYPTO_ENABLED="false"
        ),
    )
    assert without_crypto.returncode == 0, without_crypto.stderr
    assert "crypto.W001" not in without_crypto.stdout + without_crypto.stderr
    assert "trading.W001" in without_crypto.stdout + without_crypto.stderr


def test_check_refuses_a_sandbox_adapter_without_the_sandbox(tmp_path):
    checked = manage(
        "check",
        env=deployment_env(
            sandbox=False,
            database=database_url(),
            var_dir=tmp_path,
            GAME_PLATFORM="sandbox.platform.SandboxPlatform",
        ),
    )
    assert checked.returncode != 0
    assert "trading.E001" in checked.stderr
    assert "GAME_PLATFORM=sandbox.platform.SandboxPlatform cannot be loaded" in checked.stderr
