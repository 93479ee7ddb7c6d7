"""The quick start's demo data: created on the first run, reprinted on every run."""

import json
import secrets
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
    help = "Create the demo merchant and a staff login once; print both."

    def handle(self, *args: Any, **options: Any) -> None:
        state_file = settings.VAR_DIR / "demo.json"
        if not state_file.exists():
            state_file.write_text(json.dumps(self._create()))
        state = json.loads(state_file.read_text())
        self.stdout.write(f"Staff console: /admin/  user admin  password {state['adminPassword']}")
        demo = {k: state[k] for k in ("merchantId", "apiKey", "webhookSecret")}
        self.stdout.write("Demo merchant: " + json.dumps(demo))

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
