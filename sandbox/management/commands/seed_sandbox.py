import time
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from sandbox.models import SandboxBot
from sandbox.services.seeding import sandbox_seed


class Command(BaseCommand):
    help = "Fill the sandbox catalog, prices, bots and market listings."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--items", type=int, default=4000, help="catalog items, both games")
        parser.add_argument("--listings", type=int, default=40000, help="market listings")
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="do nothing when the sandbox world (its bots) already exists",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["items"] < 2 or options["listings"] < 0:
            raise CommandError("--items must be at least 2 and --listings at least 0")
        # The world, not the catalog: the catalog is the domain's and outlives the sandbox's data.
        if options["if_empty"] and SandboxBot.objects.exists():
            self.stdout.write("sandbox world already seeded")
            return
        started = time.perf_counter()
        report = sandbox_seed(items=options["items"], listings=options["listings"])
        self.stdout.write(
            f"seeded {report.items} catalog items, {report.listings} listings, {report.bots} bots "
            f"in {time.perf_counter() - started:.1f} s"
        )
