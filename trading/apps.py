from django.apps import AppConfig


class TradingConfig(AppConfig):
    name = "trading"

    def ready(self) -> None:
        from core.metrics import SCRAPE_COLLECTORS
        from merchants.webhooks.outbox import APPROVAL_SUBJECTS, ApprovalSubject
        from trading import (
            checks,  # noqa: F401 (warns about unconfigured outside systems)
            tasks,  # noqa: F401 (registers the hand-offs to workers)
        )
        from trading.deposits.selectors import (
            deposit_assets_shared,
            deposit_collateral_held,
            deposit_credits_doubled,
            deposit_escrow_held,
            deposit_provider_advances,
        )
        from trading.market.services import market_listings_changed
        from trading.marketplace.suppliers.marketplace import LISTINGS_CHANGED
        from trading.metrics import trades_metrics
        from trading.withdrawals.selectors import withdrawal_locks
        from trading.withdrawals.services.lifecycle import (
            withdrawal_approval_resolve,
            withdrawal_approval_resume,
        )
        from wallet.models import Account
        from wallet.selectors import DOUBLED_CREDITS, HELD_BALANCES, LOCK_HOLDERS, SHARED_ASSETS

        LISTINGS_CHANGED.append(
            lambda appeared, repriced, gone: market_listings_changed(
                appeared=appeared, repriced=repriced, gone=gone
            )
        )
        APPROVAL_SUBJECTS["trade"] = ApprovalSubject(
            resolve=withdrawal_approval_resolve, resume=withdrawal_approval_resume
        )
        LOCK_HOLDERS["withdrawals"] = withdrawal_locks
        HELD_BALANCES[Account.Kind.ESCROW] = deposit_escrow_held
        HELD_BALANCES[Account.Kind.COLLATERAL] = deposit_collateral_held
        HELD_BALANCES[Account.Kind.PROVIDER_COLLATERAL] = deposit_provider_advances
        SHARED_ASSETS["deposits"] = deposit_assets_shared
        DOUBLED_CREDITS["deposits"] = deposit_credits_doubled
        SCRAPE_COLLECTORS.append(trades_metrics)
