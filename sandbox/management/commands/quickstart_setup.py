"""The quick start's demo data, created on the first run and kept in ``var/demo.json``: the demo
merchant (its id, API key and webhook secret), the staff login's password, and the URL the
quick start serves on, so that the README's calls read it there (``bin/start`` prints what to
do next from it; nothing secret is printed here)."""

import json
import secrets
from argparse import ArgumentParser
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from merchants.models import Scope
from merchants.services import api_key_create, merchant_create
from wallet.services import wallet_admin_credit

DEMO_BALANCE = 10_000


class Command(BaseCommand):
    help = (
        "Create the demo merchant and a staff login once; keep them and the URL in var/demo.json."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--url", required=True, help="where the quick start serves the API")

    def handle(self, *args: Any, **options: Any) -> None:
        state_file = settings.VAR_DIR / "demo.json"
        created = not state_file.exists()
        state = self._create() if created else json.loads(state_file.read_text())
        # The port may differ from one start to the next.
        state_file.write_text(json.dumps({**state, "url": options["url"]}, indent=2) + "\n")
        made = "created" if created else "kept"
        self.stdout.write(f"Demo merchant and staff login {made} in {state_file}")

    @transaction.atomic
    def _create(self) -> dict[str, str]:
        merchant = merchant_create(
            name="Demo merchant", is_verified=True, instant_deposits_enabled=True
        )
        _, raw_key = api_key_create(
            merchant=merchant, scopes=[Scope.CORE_ACCESS, Scope.LEDGER_READ], name="demo"
        )
        wallet_admin_credit(
            merchant=merchant, amount=Decimal(DEMO_BALANCE), reason="quick start demo"
        )
        password = secrets.token_urlsafe(12)
        get_user_model().objects.create_superuser("admin", "admin@example.com", password)
        return {
            "merchantId": str(merchant.pk),
            "apiKey": raw_key,
            "webhookSecret": merchant.webhook_secret,
            "adminPassword": password,
        }
