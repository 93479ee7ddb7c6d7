import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.json import iso_ms
from merchants.management.commands.rotate_webhook_secret import overlap_hours
from merchants.models import ApiKey
from merchants.rotation import ROTATION_OVERLAP, api_key_rotate


class Command(BaseCommand):
    help = (
        "Issue a new API key like the one with this prefix (same merchant, scopes and allowed "
        "addresses); the old key keeps working for the overlap, then is refused. Prints "
        "{apiKey, prefix, previousPrefix, previousKeyExpiresAt}: the new key is shown once."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--prefix", required=True, help="the old key's prefix (tsk_...)")
        parser.add_argument(
            "--overlap-hours",
            type=overlap_hours,
            default=ROTATION_OVERLAP,
            help="hours the old key keeps working (default 24; 0: stop it now)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            old = ApiKey.objects.get(prefix=options["prefix"])
            key, raw_key = api_key_rotate(api_key=old, overlap=options["overlap_hours"])
        except ApiKey.DoesNotExist as exc:
            raise CommandError(f"no API key with prefix {options['prefix']}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        old.refresh_from_db()
        assert old.expires_at is not None
        self.stdout.write(
            json.dumps(
                {
                    "apiKey": raw_key,
                    "prefix": key.prefix,
                    "previousPrefix": old.prefix,
                    "previousKeyExpiresAt": iso_ms(old.expires_at),
                }
            )
        )
