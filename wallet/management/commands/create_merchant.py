import ipaddress
import json
from argparse import ArgumentParser, ArgumentTypeError
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core.errors import DomainError
from merchants.models import Scope
from merchants.rotation import webhook_secret_check
from merchants.services import api_key_create, merchant_create, webhook_secret_new
from wallet.services import wallet_admin_credit

MAX_BALANCE = Decimal(10) ** 16  # wallet balances are 18 digits, 2 of them cents


def _usd(value: str) -> Decimal:
    try:
        amount = Decimal(value)
        # NaN and Infinity are Decimals too; quantize refuses amounts beyond the precision.
        whole_cents = amount.is_finite() and amount == amount.quantize(Decimal("0.01"))
    except InvalidOperation as exc:
        raise ArgumentTypeError(f"not an amount: {value}") from exc
    if not whole_cents or amount <= 0 or amount >= MAX_BALANCE:
        raise ArgumentTypeError("the balance must be a positive amount in whole cents, below 10^16")
    return amount


def _cidr(value: str) -> str:
    # Checked before anything is written: the merchant is saved outside the key's transaction.
    try:
        return str(ipaddress.ip_network(value, strict=False))
    except ValueError as exc:
        raise ArgumentTypeError(f"not a CIDR: {value}") from exc


def _webhook_secret(value: str) -> str:
    try:
        return webhook_secret_check(value)
    except ValueError as exc:
        raise ArgumentTypeError(str(exc)) from exc


def _scopes(value: str) -> list[str]:
    scopes = [s.strip() for s in value.split(",") if s.strip()]
    unknown = set(scopes) - set(Scope.values)
    if unknown or not scopes:
        raise ArgumentTypeError(f"scopes are {', '.join(Scope.values)}")
    return scopes


class Command(BaseCommand):
    help = (
        "Create a merchant with an API key; prints {merchantId, apiKey, webhookSecret}. With "
        "--callback-url, the URL must accept a test event signed with the webhook secret: give "
        "the secret your receiver has (--webhook-secret), or the new one is printed first."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--verified", action="store_true")
        parser.add_argument("--callback-url", default="")
        parser.add_argument(
            "--webhook-secret",
            type=_webhook_secret,
            metavar="WHSEC",
            help="the Standard Webhooks secret (whsec_...); default: a new one",
        )
        parser.add_argument("--balance", type=_usd, help="USD credited to the wallet")
        parser.add_argument("--instant-deposits", action="store_true")
        parser.add_argument(
            "--scopes",
            type=_scopes,
            default=[Scope.CORE_ACCESS, Scope.LEDGER_READ],
            help="comma-separated; default CORE_ACCESS,LEDGER_READ",
        )
        parser.add_argument("--ip", nargs="*", type=_cidr, default=[], metavar="CIDR")

    def handle(self, *args: Any, **options: Any) -> None:
        url, secret = options["callback_url"], options["webhook_secret"] or webhook_secret_new()
        if url and not options["webhook_secret"]:
            # Before the test event goes out, so that a receiver that verifies can be given it.
            self.stderr.write(f"webhookSecret: {secret} (signs the test event now sent to {url})")
        try:
            # The callback URL's test event is network I/O: it runs before any transaction.
            merchant = merchant_create(
                name=options["name"],
                is_verified=options["verified"],
                callback_url=url,
                instant_deposits_enabled=options["instant_deposits"],
                webhook_secret=secret,
            )
            with transaction.atomic():
                _, raw_key = api_key_create(
                    merchant=merchant, scopes=options["scopes"], ip_whitelist=options["ip"]
                )
                if options["balance"]:
                    wallet_admin_credit(
                        merchant=merchant, amount=options["balance"], reason="create_merchant"
                    )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except DomainError as exc:
            given = bool(options["webhook_secret"])
            raise CommandError(self._refusal(exc, secret, given=given)) from exc
        self.stdout.write(
            json.dumps(
                {
                    "merchantId": str(merchant.pk),
                    "apiKey": raw_key,
                    "webhookSecret": merchant.webhook_secret,
                }
            )
        )

    @staticmethod
    def _refusal(exc: DomainError, secret: str, *, given: bool) -> str:
        if exc.key != "CALLBACK_URL_TEST_FAILED":
            return str(exc.message)
        if given:
            return f"{exc.message} Nothing was created: the receiver must verify with that secret."
        return (
            f"{exc.message} Nothing was created. Give the receiver the webhook secret printed "
            f"above and run the command again with --webhook-secret {secret}"
        )
