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
        from core.handoffs import HANDOFFS
        from core.metrics import SCRAPE_COLLECTORS
        from core.ports import APPROVAL_SUBJECTS, LOCK_HOLDERS, ApprovalSubject
        from crypto import checks  # noqa: F401 (warns about an unconfigured chain gateway)
        from crypto.metrics import scanner_metrics
        from crypto.selectors import cashout_locks
        from crypto.services.addresses import ACCOUNT_SWEEP, ADDRESS_SWEEP, TOKEN_ACCOUNT_CLOSE
        from crypto.services.withdrawals import (
            CASHOUT_BROADCAST,
            crypto_withdrawal_approval_resolve,
            crypto_withdrawal_approval_resume,
        )
        from crypto.tasks import (
            enqueue_account_close,
            enqueue_account_sweep,
            enqueue_address_sweep,
            enqueue_broadcast,
        )

        APPROVAL_SUBJECTS.bind(
            "crypto_withdrawal",
            ApprovalSubject(
                resolve=crypto_withdrawal_approval_resolve,
                resume=crypto_withdrawal_approval_resume,
            ),
        )
        HANDOFFS.bind(CASHOUT_BROADCAST, enqueue_broadcast)
        HANDOFFS.bind(TOKEN_ACCOUNT_CLOSE, enqueue_account_close)
        HANDOFFS.bind(ADDRESS_SWEEP, enqueue_address_sweep)
        HANDOFFS.bind(ACCOUNT_SWEEP, enqueue_account_sweep)
        LOCK_HOLDERS.bind("cashouts", cashout_locks)
        SCRAPE_COLLECTORS.append(scanner_metrics)
