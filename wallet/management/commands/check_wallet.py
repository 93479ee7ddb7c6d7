from typing import Any

from django.core.management.base import BaseCommand, CommandError

from wallet.selectors import wallet_invariants_check
from wallet.services import wallet_check_record


class Command(BaseCommand):
    help = (
        "Check the wallet invariants and keep the result for the metrics "
        "(trading_wallet_check_*); exits non-zero when one is broken."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        report = wallet_invariants_check()
        wallet_check_record(report=report)
        for title, problems in (
            ("unbalanced transfers", report.unbalanced_transfers),
            ("accounts whose balance differs from their postings", report.drifted_accounts),
            ("held accounts below zero", report.negative_held_accounts),
            ("locks without a live trade or cashout", report.orphan_locks),
            ("held balances no deposit explains", report.unexplained_balances),
            ("assets in two live deposits", report.shared_assets),
            ("credits without exactly one asset behind them", report.doubled_credits),
        ):
            for problem in problems:
                self.stderr.write(f"{title}: {problem}")
        if not report.clean:
            raise CommandError("wallet invariants broken")
        self.stdout.write("wallet invariants hold")
