"""Production settings: with exactly the variables the README's "Production" section requires,
``manage.py migrate`` runs on an empty database and ``manage.py check --deploy`` warns of
nothing docs/ops/deploy-checks.md does not explain (no missing HSTS, redirect or secure
cookies); each required variable missing stops ``manage.py`` with one line and a non-zero exit,
no traceback. The security settings a deployment turns on, and that the quick start and the
sandbox keep off. The silenced ``security.W003`` is a false positive: CSRF is checked on the
admin's forms."""

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.middleware.csrf import CsrfViewMiddleware
from django.test import Client
from django.utils.module_loading import import_string

from tests.faults.database import database_url
from tests.test_sandbox_installation import fresh_postgres

__all__ = ["fresh_postgres"]

ROOT = Path(settings.BASE_DIR)
README = (ROOT / "README.md").read_text()
DEPLOY_CHECKS = (ROOT / "docs" / "ops" / "deploy-checks.md").read_text()
YEAR = 365 * 24 * 3600
# What Django's deploy checks said of the production settings before they were made right.
FIXED = {
    "security.W003",
    "security.W004",
    "security.W008",
    "security.W010",
    "security.W012",
    "security.W016",
}


def required_variables() -> list[str]:
    """The names the README's production section exports first."""
    section = README.split("\n## Production\n", 1)[1].split("\n## ", 1)[0]
    export = next(line for line in section.splitlines() if line.startswith("export "))
    return re.findall(r"\b([A-Z][A-Z0-9_]*)=", export)


def deployment(database: str, var_dir: Path, **extra: str) -> dict[str, str]:
    """The README's required variables and nothing else of the service's (PATH and the like
    stay, for the interpreter)."""
    values = {
        "DATABASE_URL": database,
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "api.example.com",
        "CRYPTO_HD_MNEMONIC": settings.SANDBOX_HD_MNEMONIC,
    }
    kept = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return (
        kept
        | {name: values[name] for name in required_variables()}
        | {"VAR_DIR": str(var_dir)}
        | extra
    )


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def warnings_of(output: str) -> set[str]:
    return set(re.findall(r"\(([a-z_]+\.[WE]\d{3})\)", output))


def test_the_readme_requires_the_settings_a_deployment_cannot_start_without() -> None:
    assert required_variables() == [
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "CRYPTO_HD_MNEMONIC",
    ]


@pytest.mark.slow
def test_check_deploy_warns_only_of_what_docs_ops_explains(tmp_path: Path) -> None:
    checked = manage("check", "--deploy", env=deployment(database_url(), tmp_path / "var"))

    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output
    found = warnings_of(output)
    explained = set(re.findall(r"`([a-z_]+\.[WE]\d{3})`", DEPLOY_CHECKS))
    assert found <= explained, found - explained
    assert not found & FIXED, output
    assert {"security.W005", "security.W021"} <= found  # HSTS beyond this host: explained
    assert "Traceback" not in output
    assert not (tmp_path / "var").exists()


@pytest.mark.slow
def test_hsts_beyond_the_host_is_the_owners_choice_and_then_check_deploy_is_clean(
    tmp_path: Path,
) -> None:
    env = deployment(
        database_url(),
        tmp_path,
        SECURE_HSTS_INCLUDE_SUBDOMAINS="true",
        SECURE_HSTS_PRELOAD="true",
    )

    checked = manage("check", "--deploy", "--tag", "security", env=env)

    assert checked.returncode == 0, checked.stderr
    assert "System check identified no issues (1 silenced)." in checked.stdout, checked.stdout


@pytest.mark.slow
def test_migrate_runs_on_an_empty_database_with_only_the_readme_variables(
    fresh_postgres: str, tmp_path: Path
) -> None:
    migrated = manage("migrate", "--no-input", env=deployment(fresh_postgres, tmp_path / "var"))

    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert "Traceback" not in migrated.stderr
    assert not (tmp_path / "var").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "missing", ["REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "CRYPTO_HD_MNEMONIC"]
)
def test_a_missing_required_variable_is_one_clear_line(tmp_path: Path, missing: str) -> None:
    env = deployment(database_url(), tmp_path / "var")
    del env[missing]

    migrated = manage("migrate", "--no-input", env=env)

    assert migrated.returncode != 0
    assert "Traceback" not in migrated.stderr
    (line,) = migrated.stderr.splitlines()
    assert line.startswith(f"ImproperlyConfigured: {missing} ")
    assert migrated.stdout == ""
    assert not (tmp_path / "var").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto: https", "must be a header name"),
        ("SECURE_HSTS_SECONDS", "a year", "must be a whole number, not 'a year'"),
        ("REDIS_SOCKET_TIMEOUT_SECONDS", "1s", "must be a number, not '1s'"),
    ],
)
def test_a_malformed_setting_is_one_clear_line(tmp_path: Path, name: str, value: str, said: str):
    checked = manage("check", env=deployment(database_url(), tmp_path, **{name: value}))

    assert checked.returncode == 1
    (line,) = checked.stderr.splitlines()
    assert line.startswith(f"ImproperlyConfigured: {name} {said}")


SECURITY_SETTINGS = (
    "ALLOWED_HOSTS",
    "SECURE_SSL_REDIRECT",
    "SECURE_REDIRECT_EXEMPT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_PROXY_SSL_HEADER",
)


def security_settings(env: dict[str, str]) -> dict[str, Any]:
    script = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {SECURITY_SETTINGS!r}}}))"
    )
    shown = manage("shell", "-c", script, env=env)
    assert shown.returncode == 0, shown.stderr
    values: dict[str, Any] = json.loads(shown.stdout.splitlines()[-1])
    return values


@pytest.mark.slow
def test_a_deployment_is_https_only_and_the_sandbox_is_not(tmp_path: Path) -> None:
    deployed = deployment(database_url(), tmp_path, SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto")
    sandbox = deployed | {"SANDBOX": "true"}
    del sandbox["ALLOWED_HOSTS"]

    assert security_settings(deployed) == {
        "ALLOWED_HOSTS": ["api.example.com"],
        "SECURE_SSL_REDIRECT": True,
        "SECURE_REDIRECT_EXEMPT": ["^health$", "^metrics$"],
        "SECURE_HSTS_SECONDS": YEAR,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
    }
    assert security_settings(sandbox) == {
        "ALLOWED_HOSTS": ["*"],
        "SECURE_SSL_REDIRECT": False,
        "SECURE_REDIRECT_EXEMPT": ["^health$", "^metrics$"],
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
    }


def test_csrf_is_checked_by_a_subclass_of_djangos_middleware() -> None:
    """Why security.W003 is silenced: Django looks for its middleware by name only."""
    assert "security.W003" in settings.SILENCED_SYSTEM_CHECKS
    assert "django.middleware.csrf.CsrfViewMiddleware" not in settings.MIDDLEWARE
    assert [
        path for path in settings.MIDDLEWARE if issubclass(import_string(path), CsrfViewMiddleware)
    ] == ["core.api.middleware.CsrfOutsideApi"]


@pytest.mark.django_db
def test_the_admins_forms_refuse_a_post_without_its_csrf_token() -> None:
    User.objects.create_superuser("staff", "staff@example.com", "correct horse battery")
    browser = Client(enforce_csrf_checks=True)
    credentials = {"username": "staff", "password": "correct horse battery", "next": "/admin/"}

    forged = browser.post("/admin/login/", credentials)

    assert forged.status_code == 403
    assert b"CSRF" in forged.content
    page = browser.get("/admin/login/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content)
    assert token is not None
    logged_in = browser.post(
        "/admin/login/", credentials | {"csrfmiddlewaretoken": token.group(1).decode()}
    )
    assert logged_in.status_code == 302
    assert logged_in["Location"] == "/admin/"
