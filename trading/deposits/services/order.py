"""What a deposit asks for: the items at the prices the owner saw, and whose items they are.
The deposit routes' input serializers build the order (``trading.deposits.inputs``)."""

from dataclasses import dataclass
from decimal import Decimal

from merchants.models import Client


@dataclass(frozen=True)
class DepositItem:
    item_id: str
    price: Decimal  # per unit
    amount: int = 1


@dataclass(frozen=True)
class Depositor:
    """Whose items: a client (its token's account) or, for a self sell, a trade URL's owner."""

    platform_id: str
    trade_url: str
    client: Client | None = None
    external_client_user_id: str = ""


@dataclass(frozen=True)
class DepositOrder:
    """What to deposit, as either route's body says it."""

    items: list[DepositItem]
    game: int
    external_id: str = ""
    is_instant: bool = False


@dataclass(frozen=True)
class SelfSell:
    """A self sell: the order, of the items of the account behind ``trade_url``."""

    trade_url: str
    order: DepositOrder
