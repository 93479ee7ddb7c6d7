from django.apps import AppConfig


class WalletConfig(AppConfig):
    name = "wallet"

    def ready(self) -> None:
        from core.metrics import SCRAPE_COLLECTORS
        from wallet.metrics import wallet_check_metrics

        SCRAPE_COLLECTORS.append(wallet_check_metrics)
