from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import DomainError
from trading.services.stock import stock_listing_add


def _price(value: str) -> Decimal:
    try:
        return Decimal(value)
    except InvalidOperation as exc:
        raise CommandError(f"{value!r} is not a price") from exc


class Command(BaseCommand):
    help = (
        "Put an item one of the bots holds on sale as an instant listing (own stock) at a "
        "sourcing price; the merchant's fee is added on top."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bot", required=True, help="the bot's platform id")
        parser.add_argument("--asset", required=True, help="the item's asset id in the bot")
        parser.add_argument("--price", required=True, type=_price, help="USD, whole cents")
        parser.add_argument("--game", type=int, default=730)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            row = stock_listing_add(
                bot_platform_id=options["bot"],
                game=options["game"],
                asset_id=options["asset"],
                price=options["price"],
            )
        except DomainError as exc:
            raise CommandError(f"{exc.key}: {exc}") from exc
        self.stdout.write(f"listed {row.id}: {row.market_hash_name} at {row.price}")
