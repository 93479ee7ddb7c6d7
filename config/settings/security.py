"""Secrets, the host names answered, HTTPS behind a TLS-terminating proxy, cookies and the keys
that seal secrets stored in the database (docs/ops/deploy-checks.md)."""

import os
import secrets

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import QUICKSTART, SANDBOX, VAR_DIR
from config.settings.environment import env_bool, env_int, env_list


def _secret_key() -> str:
    configured = os.environ.get("SECRET_KEY")
    if configured:
        return configured
    if not QUICKSTART:
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set.")
    # Quick start: one generated key kept beside the SQLite file, so sessions survive restarts.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# How many reverse proxies sit in front of the web workers; their X-Forwarded-For entries are
# trusted to find the client address used by API key IP whitelists.
NUM_PROXIES = env_int("NUM_PROXIES", 0)


# -- A deployment behind a TLS-terminating proxy (docs/ops/deploy-checks.md) ---------------------
# A deployment is PostgreSQL without the sandbox. It answers only the host names it is given, is
# reached over HTTPS only, and tells browsers so; the quick start and the sandbox serve plain
# HTTP on loopback and take any host name. Each setting can be turned by the environment.
DEPLOYED = not QUICKSTART and not SANDBOX


def _allowed_hosts() -> list[str]:
    hosts = env_list("ALLOWED_HOSTS")
    if hosts or not DEPLOYED:
        return hosts or ["*"]
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must be set when DATABASE_URL is set without the sandbox: the host names "
        "the service answers to, comma-separated (e.g. api.example.com)."
    )


def _proxy_ssl_header() -> tuple[str, str] | None:
    """The header the TLS proxy sets to ``https`` on what reached it over TLS (and removes from
    what clients send), when the operator names one: the service can then tell HTTPS from HTTP
    behind it (a redirect, HSTS, secure cookies and the admin's CSRF origin check need that)."""
    name = os.environ.get("SECURE_PROXY_SSL_HEADER", "").strip()
    if not name:
        return None
    if not all(c.isascii() and (c.isalnum() or c == "-") for c in name):
        raise ImproperlyConfigured(
            "SECURE_PROXY_SSL_HEADER must be a header name such as X-Forwarded-Proto, not "
            f"{name!r}."
        )
    return "HTTP_" + name.upper().replace("-", "_"), "https"


ALLOWED_HOSTS = _allowed_hosts()
SECURE_PROXY_SSL_HEADER = _proxy_ssl_header()
# Plain HTTP is redirected to HTTPS, but for the probes, which ask from inside the network.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", DEPLOYED)
SECURE_REDIRECT_EXEMPT = [r"^health$", r"^metrics$"]
# HSTS for a year on this host; its subdomains and the browsers' preload list only when the
# domain's owner says so (both reach beyond this service and take months to undo).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if DEPLOYED else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# The admin's session and CSRF cookies never travel over plain HTTP.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", DEPLOYED)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", DEPLOYED)

# Secrets stored in the database (bot secrets and sessions) are sealed with these Fernet keys
# (comma-separated; the first seals, all open: rotate by putting a new key first).
SECRETS_ENCRYPTION_KEYS = env_list("SECRETS_ENCRYPTION_KEYS")
