"""How the wallet looks in API responses: the shape once, as a ``TypedDict`` the body builder
returns and the OpenAPI document is generated from."""

from decimal import Decimal
from typing import TypedDict


class WalletBalance(TypedDict):
    balance: Decimal
    pendingBalance: Decimal
    escrowBalance: Decimal
    currency: str
