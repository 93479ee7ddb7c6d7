"""Cashout destinations that burn what they are sent are refused with 3004
ONCHAIN_WITHDRAW_INVALID_ADDRESS on both routes, nothing written and nothing locked; addresses
beside them (a deposit address of the service, the first address above the reserved range) are
paid as any other."""

from decimal import Decimal

import pytest

from crypto.keys import associated_token_account, hot_wallet
from crypto.models import CryptoWithdrawal
from crypto.networks import network
from ledger.models import Funding
from tests.crypto.conftest import USER, cashout_body, data, deposit_address, money, user_headers
from tests.factories import assert_error

pytestmark = pytest.mark.django_db

ZERO = "0x0000000000000000000000000000000000000000"


def both_routes(desk, actor, **fields):
    """The same cashout asked by the merchant and by its client (one user: distinct requests)."""
    body = cashout_body(**fields)
    secure = desk.post(
        "/secure/crypto/withdraw", body | {"platformId": USER}, headers=actor.headers
    )
    client = desk.post(
        "/client/crypto/withdraw",
        body | {"requestId": body["requestId"] + "-c"},
        headers=user_headers(desk, actor),
    )
    return secure, client


def assert_refused(desk, actor, chain: str, address: str, why: str, token: str = "USDC") -> None:
    for response in both_routes(desk, actor, chain=chain, token=token, address=address):
        error = assert_error(response, 400, 3004, "ONCHAIN_WITHDRAW_INVALID_ADDRESS")
        assert why in error["message"], error
    assert not CryptoWithdrawal.objects.exists()
    assert not Funding.objects.exists()
    assert money(actor)["available"] == Decimal("1000.00")
    assert money(actor)["locked"] == Decimal("0.00")


@pytest.mark.parametrize("chain", ["ETH", "BSC"])
@pytest.mark.parametrize(
    ("address", "why"),
    [
        (ZERO, "the zero address"),
        ("0x000000000000000000000000000000000000dEaD", "burn or reserved"),
        ("0x0000000000000000000000000000000000000001", "burn or reserved"),  # ecrecover
        ("0x0000000000000000000000000000000000001000", "burn or reserved"),  # BSC validator set
        ("0x000000000000000000000000000000000000FFff", "burn or reserved"),
        ("0xdEAD000000000000000042069420694206942069", "burn or reserved"),
    ],
)
def test_evm_burn_addresses_are_3004(desk, alice, chain, address, why):
    assert_refused(desk, alice, chain, address, why)


@pytest.mark.parametrize("chain", ["ETH", "BSC"])
@pytest.mark.parametrize("contract_of", ["USDC", "USDT"])
def test_a_token_contract_is_3004_on_evm_chains(desk, alice, chain, contract_of):
    contract = network(chain).token(contract_of).contract
    assert_refused(desk, alice, chain, contract, f"the {contract_of} token's contract")


@pytest.mark.parametrize("chain", ["ETH", "BSC", "SOL"])
def test_the_hot_wallet_is_3004(desk, alice, chain):
    assert_refused(desk, alice, chain, hot_wallet(chain), "the service's hot wallet")


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("11111111111111111111111111111111", "the system program"),
        ("1nc1nerator11111111111111111111111111111111", "the incinerator"),
        ("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "the SPL token program"),
        ("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", "the Token-2022 program"),
        ("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", "associated token account program"),
        ("So11111111111111111111111111111111111111112", "the wrapped SOL mint"),
    ],
)
def test_solana_burn_addresses_are_3004(desk, alice, address, why):
    assert_refused(desk, alice, "SOL", address, why)


@pytest.mark.parametrize("token", ["USDC", "USDT"])
def test_solana_mints_and_the_hot_wallets_token_accounts_are_3004(desk, alice, token):
    mint = network("SOL").token(token).contract
    assert_refused(desk, alice, "SOL", mint, f"the {token} token's contract", token=token)
    account = associated_token_account(owner=hot_wallet("SOL"), mint=mint)
    assert_refused(desk, alice, "SOL", account, f"the service's {token} token account")


def test_addresses_beside_the_refused_ones_are_paid(desk, alice, bob):
    """The first address above the reserved range, and a deposit address of the service (its
    owner is credited by the deposit): both are cashouts as any other."""
    above = "0x0000000000000000000000000000000000010000"
    bobs = deposit_address(desk, bob, "ETH")["address"]
    for n, address in enumerate((above, bobs)):
        secure, client = both_routes(desk, alice, address=address, requestId=f"req-beside-{n}")
        assert data(secure)["address"] == address
        assert data(client)["address"] == address
    assert CryptoWithdrawal.objects.filter(merchant=alice.merchant).count() == 4
