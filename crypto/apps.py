from importlib import import_module

from django.apps import AppConfig

# The real chains' bookkeeping lives beside the gateways that use it, in the app's label; Django
# imports only ``crypto.models`` by itself.
SUBPACKAGE_MODELS = ("crypto.evm.models", "crypto.solana.models")


class CryptoConfig(AppConfig):
    name = "crypto"

    def import_models(self) -> None:
        super().import_models()
        for module in SUBPACKAGE_MODELS:
            import_module(module)

    def ready(self) -> None:
        from core.metrics import SCRAPE_COLLECTORS
        from crypto import (
            checks,  # noqa: F401 (warns about an unconfigured chain gateway)
            tasks,  # noqa: F401 (registers the hand-offs to workers)
        )
        from crypto.metrics import scanner_metrics
        from crypto.selectors import cashout_locks
        from crypto.services.withdrawals import (
            crypto_withdrawal_approval_resolve,
            crypto_withdrawal_approval_resume,
        )
        from merchants.webhooks.outbox import APPROVAL_SUBJECTS, ApprovalSubject
        from wallet.selectors import LOCK_HOLDERS

        APPROVAL_SUBJECTS["crypto_withdrawal"] = ApprovalSubject(
            resolve=crypto_withdrawal_approval_resolve, resume=crypto_withdrawal_approval_resume
        )
        LOCK_HOLDERS["cashouts"] = cashout_locks
        SCRAPE_COLLECTORS.append(scanner_metrics)
