from django.apps import AppConfig


class TradingConfig(AppConfig):
    name = "trading"

    def ready(self) -> None:
        from merchants.webhooks import APPROVAL_HANDLERS
        from trading.selectors.trades import withdrawal_locks
        from trading.services.withdrawals import withdrawal_approval_resolve
        from wallet.selectors import LOCK_HOLDERS

        APPROVAL_HANDLERS["trade"] = withdrawal_approval_resolve
        LOCK_HOLDERS["withdrawals"] = withdrawal_locks
