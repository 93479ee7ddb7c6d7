"""Secrets kept at rest (a bot's login secrets, its session): sealed with Fernet under the keys
of ``SECRETS_ENCRYPTION_KEYS`` (comma-separated Fernet keys from the environment). The first key
seals; every key opens, so a key is rotated by putting the new one first (values saved from
then on are sealed with it), sealing every stored value again under it (``manage.py
reseal_secrets``), and dropping the old key once nothing sealed with it is left
(docs/ops/rotation.md). Every column holding a sealed value is named ``*_sealed``."""

from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SealedSecretError(Exception):
    """A sealed value that no configured key opens (a dropped key, a damaged row)."""


@cache
def _box(keys: tuple[str, ...]) -> MultiFernet:
    try:
        return MultiFernet([Fernet(key.encode()) for key in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(
            "SECRETS_ENCRYPTION_KEYS holds a value that is not a Fernet key."
        ) from exc


def _current() -> MultiFernet:
    keys = tuple(settings.SECRETS_ENCRYPTION_KEYS)
    if not keys:
        raise ImproperlyConfigured(
            "SECRETS_ENCRYPTION_KEYS is not set: no secret can be stored or read."
        )
    return _box(keys)


def sealing_configured() -> bool:
    return bool(settings.SECRETS_ENCRYPTION_KEYS)


def seal(plain: str) -> str:
    """The sealed form of ``plain`` ("" stays "": nothing stored)."""
    if not plain:
        return ""
    return _current().encrypt(plain.encode()).decode()


def reseal(sealed: str) -> str:
    """``sealed`` sealed again under the first key (opened with whichever key sealed it)."""
    if not sealed:
        return ""
    try:
        return _current().rotate(sealed.encode()).decode()
    except InvalidToken as exc:
        raise SealedSecretError("no configured key opens this secret") from exc


def sealed_under_first_key(sealed: str) -> bool:
    """Whether the first key alone opens ``sealed`` (an empty value seals nothing: True)."""
    if not sealed:
        return True
    _current()  # configured, or ImproperlyConfigured
    try:
        _box(tuple(settings.SECRETS_ENCRYPTION_KEYS[:1])).decrypt(sealed.encode())
    except InvalidToken:
        return False
    return True


def unseal(sealed: str) -> str:
    if not sealed:
        return ""
    try:
        return _current().decrypt(sealed.encode()).decode()
    except InvalidToken as exc:
        raise SealedSecretError("no configured key opens this secret") from exc
