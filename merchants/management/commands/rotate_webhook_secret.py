import json
from argparse import ArgumentParser, ArgumentTypeError
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.json import iso_ms
from merchants.models import Merchant
from merchants.rotation import ROTATION_OVERLAP, webhook_secret_check, webhook_secret_rotate

MAX_OVERLAP_HOURS = 30 * 24


def overlap_hours(value: str) -> timedelta:
    """Hours the old secret or key keeps working: 0 (stop it now) to 30 days."""
    try:
        hours = float(value)
    except ValueError as exc:
        raise ArgumentTypeError(f"not a number of hours: {value}") from exc
    if not 0 <= hours <= MAX_OVERLAP_HOURS:
        raise ArgumentTypeError(f"give 0 to {MAX_OVERLAP_HOURS} hours")
    return timedelta(hours=hours)


def _secret(value: str) -> str:
    try:
        return webhook_secret_check(value)
    except ValueError as exc:
        raise ArgumentTypeError(str(exc)) from exc


class Command(BaseCommand):
    help = (
        "Give a merchant a new webhook secret; the old one keeps signing beside it for the "
        "overlap (Standard Webhooks: both signatures in webhook-signature). Prints "
        "{merchantId, webhookSecret, previousSecretExpiresAt}."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--merchant", required=True, help="merchant id")
        parser.add_argument(
            "--overlap-hours",
            type=overlap_hours,
            default=ROTATION_OVERLAP,
            help="hours the old secret keeps signing (default 24; 0: stop it now)",
        )
        parser.add_argument(
            "--secret",
            type=_secret,
            metavar="WHSEC",
            help="the new secret your receiver already has (whsec_...); default: a new one",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            merchant = Merchant.objects.get(pk=options["merchant"])
            rotated = webhook_secret_rotate(
                merchant=merchant,
                overlap=options["overlap_hours"],
                secret=options["secret"] or "",
            )
        except (Merchant.DoesNotExist, ValidationError) as exc:
            raise CommandError(f"no merchant {options['merchant']}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        expires = rotated.previous_webhook_secret_expires_at
        self.stdout.write(
            json.dumps(
                {
                    "merchantId": str(rotated.pk),
                    "webhookSecret": rotated.webhook_secret,
                    "previousSecretExpiresAt": iso_ms(expires) if expires else None,
                }
            )
        )
