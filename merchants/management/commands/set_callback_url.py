from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from merchants.models import Merchant
from merchants.webhooks.callbacks import merchant_callback_url_set


class Command(BaseCommand):
    help = "Set a merchant's callback URL once it accepted a signed test event (empty: unset)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--merchant", required=True, help="merchant id")
        parser.add_argument("--url", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            merchant = Merchant.objects.get(pk=options["merchant"])
            merchant_callback_url_set(merchant=merchant, url=options["url"])
        except (Merchant.DoesNotExist, ValueError) as exc:
            raise CommandError(f"no merchant {options['merchant']}") from exc
        except DomainError as exc:
            raise CommandError(str(exc.message)) from exc
        self.stdout.write(f"callback URL of {merchant.pk} set to {options['url'] or '(none)'}")
