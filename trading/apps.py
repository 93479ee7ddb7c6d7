from django.apps import AppConfig


class TradingConfig(AppConfig):
    name = "trading"

    def ready(self) -> None:
        from merchants.webhooks import APPROVAL_HANDLERS
        from trading.services.withdrawals import withdrawal_approval_resolve

        APPROVAL_HANDLERS["trade"] = withdrawal_approval_resolve
