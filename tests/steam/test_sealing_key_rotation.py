"""The bots' sealing key rotated (docs/ops/rotation.md): the new key is put first in
SECRETS_ENCRYPTION_KEYS with the old one after it (the service keeps opening every secret),
``manage.py reseal_secrets`` seals each stored value again under the new key, its ``--check``
passes, and the old key is dropped: the bot then logs in with the new key alone."""

import json
from io import StringIO

from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from core.sealed import unseal
from tests.steam.conftest import BOOT
from trading.models import SteamBot
from trading.services.bots import steam_bot_log_in

SEALED = ("shared_secret", "identity_secret", "password", "refresh_token", "access_token")


def reseal(*argv: str) -> tuple[dict, str]:
    """What the command printed, and its refusal ("" when it succeeded)."""
    out = StringIO()
    try:
        call_command("reseal_secrets", *argv, stdout=out)
    except CommandError as exc:
        return json.loads(out.getvalue()), str(exc)
    return json.loads(out.getvalue()), ""


def opened(bot: SteamBot) -> dict[str, str]:
    bot.refresh_from_db()
    return {name: unseal(getattr(bot, f"{name}_sealed")) for name in SEALED}


def test_the_values_are_sealed_again_and_the_old_key_is_dropped(settings, bot):
    old_key, new_key = settings.SECRETS_ENCRYPTION_KEYS[0], Fernet.generate_key().decode()
    before = opened(bot)
    assert all(before.values())  # every secret and the session are stored

    settings.SECRETS_ENCRYPTION_KEYS = [new_key, old_key]
    assert opened(bot) == before  # the service reads on meanwhile
    printed, refusal = reseal("--check")
    assert printed == {"resealed": 0, "notUnderFirstKey": 5, "unreadable": []}
    assert refusal == "5 sealed values are not under the first key yet."
    assert reseal() == ({"resealed": 5, "notUnderFirstKey": 0, "unreadable": []}, "")
    assert reseal("--check") == ({"resealed": 0, "notUnderFirstKey": 0, "unreadable": []}, "")

    settings.SECRETS_ENCRYPTION_KEYS = [new_key]
    assert opened(bot) == before
    bot.access_token_sealed = ""  # the next call logs in from the sealed password and secrets
    bot.save(update_fields=["access_token_sealed"])
    assert steam_bot_log_in(bot=bot, staff=BOOT) == SteamBot.State.ONLINE


def test_values_no_configured_key_opens_are_named_and_left_alone(settings, bot):
    stored = SteamBot.objects.values_list("password_sealed", flat=True).get(pk=bot.pk)
    settings.SECRETS_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # the old key lost

    printed, refusal = reseal()

    assert refusal.startswith("5 sealed values open with no configured key")
    assert printed["resealed"] == 0
    assert f"trading.SteamBot {bot.pk} password_sealed" in printed["unreadable"]
    assert SteamBot.objects.values_list("password_sealed", flat=True).get(pk=bot.pk) == stored
