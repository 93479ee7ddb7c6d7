"""Staff's writes to the bots (the admin): secrets sealed as they are entered, never read back
for display; "log in again" renews the session now, recorded with who asked and why."""

import base64
import binascii
import contextlib

from core.errors import DomainError
from core.sealed import seal
from core.services import staff_action_record
from core.staff import Staff
from trading.models import SteamBot
from trading.platform.base import PlatformError
from trading.platform.steam.session import bot_login

SECRET_FIELDS = ("shared_secret", "identity_secret", "password", "refresh_token")
GUARD_SECRETS = ("shared_secret", "identity_secret")
GUARD_SECRET_BYTES = 20


def steam_bot_secret_check(name: str, value: str) -> None:
    """Guard secrets are base64 of 20 bytes (as Steam's mobile authenticator file holds them)."""
    if name in GUARD_SECRETS and value:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DomainError("VALIDATION_FAILED", f"{name} is not base64.") from exc
        if len(raw) != GUARD_SECRET_BYTES:
            raise DomainError("VALIDATION_FAILED", f"{name} is not a 20-byte secret.")


def steam_bot_secrets_set(*, bot: SteamBot, secrets: dict[str, str]) -> list[str]:
    """Seal each secret given (a blank one keeps what is stored); returns the fields changed.
    A new refresh token or password drops the current session, so the next call logs in."""
    changed = []
    for name in SECRET_FIELDS:
        value = secrets.get(name, "").strip()
        if not value:
            continue
        steam_bot_secret_check(name, value)
        setattr(bot, f"{name}_sealed", seal(value))
        changed.append(f"{name}_sealed")
    if {"password_sealed", "refresh_token_sealed"} & set(changed):
        bot.access_token_sealed = ""
        bot.access_token_expires_at = None
        changed += ["access_token_sealed", "access_token_expires_at"]
    return changed


def steam_bot_log_in(*, bot: SteamBot, staff: Staff) -> str:
    """Log the bot in again now; returns its state afterwards (the reason is on the bot). The
    login is network I/O, so the record of the action is written after it, with its outcome."""
    with contextlib.suppress(PlatformError):  # the bot's state says why
        bot_login(bot)
    bot.refresh_from_db()
    staff_action_record(
        staff=staff,
        action="log_in_bot",
        subject_type="steam_bot",
        subject_id=str(bot.pk),
        state=bot.state,
        state_detail=bot.state_detail,
    )
    return bot.state
