"""The enums of the response shapes are written as ``Literal`` types (so mypy checks the bodies);
each must list exactly the values of the choices it renders."""

from typing import Any, get_args

import pytest

from crypto.models import CryptoDeposit, CryptoWithdrawal
from crypto.networks import CHAINS, TOKENS
from crypto.representations import Chain, DepositStatus, TokenSymbol, WithdrawalStatus
from ledger.models import ADMIN_KINDS, ADMIN_STATUS, Funding
from ledger.representations import FundingStatus, FundingType, RowStatus, RowType
from merchants.representations import WebhookEventStatus
from merchants.verification.models import VerificationProcess
from merchants.verification.representations import ProcessStatus
from merchants.webhooks.models import WebhookEvent
from trading.games import GAMES, PHASES
from trading.marketplace.base import Delivery as DeliveryChoices
from trading.models import Trade
from trading.trades.shapes import Delivery, Game, Phase, TradeSource, TradeType


@pytest.mark.parametrize(
    ("literal", "values"),
    [
        (Game, [str(game) for game in GAMES]),
        (Phase, PHASES),
        (Delivery, [choice.value for choice in DeliveryChoices]),
        (TradeType, Trade.Type.values),
        (TradeSource, Trade.Source.values),
        (Chain, CHAINS),
        (TokenSymbol, TOKENS),
        (DepositStatus, CryptoDeposit.Status.values),
        (WithdrawalStatus, CryptoWithdrawal.Status.values),
        (FundingType, Funding.Type.values),
        (FundingStatus, Funding.Status.values),
        (RowType, [*Funding.Type.values, *ADMIN_KINDS]),
        (RowStatus, [*Funding.Status.values, ADMIN_STATUS]),
        (WebhookEventStatus, WebhookEvent.Status.values),
        (ProcessStatus, VerificationProcess.Status.values),
    ],
)
def test_each_literal_lists_the_choices_it_renders(literal: Any, values: Any) -> None:
    assert list(get_args(literal)) == list(values)
