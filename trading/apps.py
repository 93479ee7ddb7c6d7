from django.apps import AppConfig


class TradingConfig(AppConfig):
    name = "trading"

    def ready(self) -> None:
        from core.handoffs import HANDOFFS
        from core.metrics import SCRAPE_COLLECTORS
        from core.ports import (
            APPROVAL_SUBJECTS,
            DOUBLED_CREDITS,
            HELD_BALANCES,
            LOCK_HOLDERS,
            SHARED_ASSETS,
            ApprovalSubject,
        )
        from trading import checks  # noqa: F401 (warns about unconfigured outside systems)
        from trading.deposits.selectors import (
            deposit_assets_shared,
            deposit_collateral_held,
            deposit_credits_doubled,
            deposit_escrow_held,
            deposit_provider_advances,
        )
        from trading.deposits.services.store import DEPOSIT_OFFER
        from trading.market.services import market_listings_changed
        from trading.marketplace.suppliers.marketplace import LISTINGS_CHANGED
        from trading.metrics import trades_metrics
        from trading.tasks import (
            enqueue_cancel_completion,
            enqueue_delivery,
            enqueue_deposit_offer,
            enqueue_purchase,
        )
        from trading.withdrawals.selectors import withdrawal_locks
        from trading.withdrawals.services.cancels import CANCELS_COMPLETE
        from trading.withdrawals.services.handover import BOT_DELIVERY
        from trading.withdrawals.services.lifecycle import (
            PURCHASE,
            withdrawal_approval_resolve,
            withdrawal_approval_resume,
        )
        from wallet.models import Account

        LISTINGS_CHANGED.append(
            lambda appeared, repriced, gone: market_listings_changed(
                appeared=appeared, repriced=repriced, gone=gone
            )
        )
        APPROVAL_SUBJECTS.bind(
            "trade",
            ApprovalSubject(resolve=withdrawal_approval_resolve, resume=withdrawal_approval_resume),
        )
        HANDOFFS.bind(PURCHASE, enqueue_purchase)
        HANDOFFS.bind(DEPOSIT_OFFER, enqueue_deposit_offer)
        HANDOFFS.bind(CANCELS_COMPLETE, enqueue_cancel_completion)
        HANDOFFS.bind(BOT_DELIVERY, enqueue_delivery)
        LOCK_HOLDERS.bind("withdrawals", withdrawal_locks)
        HELD_BALANCES.bind(Account.Kind.ESCROW, deposit_escrow_held)
        HELD_BALANCES.bind(Account.Kind.COLLATERAL, deposit_collateral_held)
        HELD_BALANCES.bind(Account.Kind.PROVIDER_COLLATERAL, deposit_provider_advances)
        SHARED_ASSETS.bind("deposits", deposit_assets_shared)
        DOUBLED_CREDITS.bind("deposits", deposit_credits_doubled)
        SCRAPE_COLLECTORS.append(trades_metrics)
