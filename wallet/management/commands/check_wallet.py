from typing import Any

from django.core.management.base import BaseCommand, CommandError

from wallet.selectors import INVARIANTS
from wallet.services.checks import wallet_check_run


class Command(BaseCommand):
    help = (
        "Check the wallet invariants and record the run (the console's home shows the last one); "
        "exits non-zero when one is broken."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        check, _ = wallet_check_run()
        for name, title in INVARIANTS.items():
            for problem in check.problems.get(name, []):
                self.stderr.write(f"{title}: {problem}")
        if not check.is_clean:
            raise CommandError("wallet invariants broken")
        self.stdout.write("wallet invariants hold")
