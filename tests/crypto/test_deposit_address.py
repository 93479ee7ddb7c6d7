"""GET /client/crypto/deposit-address and GET /secure/crypto/deposit-address (contract 2.7)."""

import pytest

from crypto.keys import associated_token_account, evm_address, solana_owner
from crypto.models import AddressAllocation
from tests.crypto.conftest import (
    USER,
    confirm,
    data,
    deposit_address,
    open_solana_address,
    send,
    user_headers,
)
from tests.factories import assert_error, make_actor

pytestmark = pytest.mark.django_db

SEPOLIA_USDT = "0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0"
SEPOLIA_USDC = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
DEVNET_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
DEVNET_USDT = "EJwZgeZrdC8TXTQbQBoL6bfuAnFUUy1PVCMB4DYPzVaS"


def test_evm_address_is_the_users_hd_address_shared_by_eth_and_bsc(desk, alice):
    headers = user_headers(desk, alice)

    eth = data(desk.get("/client/crypto/deposit-address", headers=headers, params={"chain": "ETH"}))
    bsc = data(desk.get("/client/crypto/deposit-address", headers=headers, params={"chain": "BSC"}))

    index = AddressAllocation.objects.get(merchant=alice.merchant, platform_id=USER).pk
    assert eth == {
        "platformId": USER,
        "chain": "ETH",
        "network": "ethereum-sepolia",
        "testnet": True,
        "status": "active",
        "address": evm_address(index),
        "tokenAccount": None,
        "tokens": [
            {"token": "USDT", "contract": SEPOLIA_USDT, "decimals": 6},
            {"token": "USDC", "contract": SEPOLIA_USDC, "decimals": 6},
        ],
        "minDepositCents": 1000,
        "minConfirmations": 12,
        "explorerUrl": f"https://sepolia.etherscan.io/address/{evm_address(index)}",
    }
    assert bsc["address"] == eth["address"]
    assert bsc["network"] == "bsc-testnet"
    assert [t["decimals"] for t in bsc["tokens"]] == [18, 18]
    assert bsc["tokens"][0]["contract"] == "0x337610d27c682E347C9cD60BD4b3b107C9d34dDd"
    assert (bsc["minDepositCents"], bsc["minConfirmations"]) == (100, 15)


def test_each_user_of_each_merchant_gets_its_own_address(desk, alice, bob):
    first = deposit_address(desk, alice, "ETH")
    again = deposit_address(desk, alice, "ETH")
    other_user = deposit_address(desk, alice, "ETH", user="76561197960265999")
    other_merchant = deposit_address(desk, bob, "ETH")

    assert first["address"] == again["address"]
    addresses = {first["address"], other_user["address"], other_merchant["address"]}
    assert len(addresses) == 3
    assert AddressAllocation.objects.count() == 3


def test_solana_account_is_pending_until_the_chain_opened_it(desk, alice, clock_advance):
    pending = deposit_address(desk, alice, "SOL")
    assert pending["status"] == "pending"
    assert pending["address"] is None
    assert pending["tokenAccount"] is None
    assert pending["explorerUrl"] is None
    assert pending["tokens"] == []
    assert pending["network"] == "solana-devnet"

    clock_advance(5)
    assert deposit_address(desk, alice, "SOL")["status"] == "pending"
    clock_advance(6)
    active = deposit_address(desk, alice, "SOL")

    owner = solana_owner(AddressAllocation.objects.get(merchant=alice.merchant).pk)
    assert active["status"] == "active"
    assert active["address"] == owner
    assert active["tokenAccount"] == associated_token_account(owner=owner, mint=DEVNET_USDC)
    assert active["tokens"] == [{"token": "USDC", "contract": DEVNET_USDC, "decimals": 6}]
    assert active["minConfirmations"] == 32


def test_solana_tokens_list_only_the_open_accounts(desk, alice, clock_advance):
    open_solana_address(desk, alice, clock_advance, "USDC")
    usdt = deposit_address(desk, alice, "SOL", "USDT")
    assert usdt["status"] == "pending"
    assert [t["token"] for t in usdt["tokens"]] == ["USDC"]

    clock_advance(11)
    usdt = deposit_address(desk, alice, "SOL", "USDT")
    assert usdt["status"] == "active"
    assert [t["token"] for t in usdt["tokens"]] == ["USDT", "USDC"]
    assert usdt["tokenAccount"] == associated_token_account(owner=usdt["address"], mint=DEVNET_USDT)


def test_token_is_ignored_on_evm_chains(desk, alice):
    usdt = deposit_address(desk, alice, "ETH", "USDT")
    usdc = deposit_address(desk, alice, "ETH", "USDC")
    assert usdt == usdc


def test_paused_chain_keeps_its_address_with_status_paused(desk, alice, settings):
    before = deposit_address(desk, alice, "BSC")
    paused = desk.post("/sandbox/crypto/chains/BSC", {"paused": True}, headers=alice.headers)
    assert data(paused) == {"chain": "BSC", "paused": True, "failBroadcasts": False}

    halted = deposit_address(desk, alice, "BSC")
    assert halted["status"] == "paused"
    assert halted["address"] == before["address"]
    assert deposit_address(desk, alice, "ETH")["status"] == "active"

    desk.post("/sandbox/crypto/chains/BSC", {"paused": False}, headers=alice.headers)
    settings.CRYPTO_PAUSED_CHAINS = frozenset({"ETH"})
    assert deposit_address(desk, alice, "BSC")["status"] == "active"
    assert deposit_address(desk, alice, "ETH")["status"] == "paused"


def test_mainnet_serves_the_mainnet_tokens(desk, alice, settings):
    settings.CRYPTO_NETWORK = "mainnet"
    eth = deposit_address(desk, alice, "ETH")
    bsc = deposit_address(desk, alice, "BSC")

    assert (eth["network"], eth["testnet"]) == ("ethereum-mainnet", False)
    assert eth["tokens"] == [
        {"token": "USDT", "contract": "0xdAC17F958D2ee523a2206206994597C13D831ec7", "decimals": 6},
        {"token": "USDC", "contract": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "decimals": 6},
    ]
    assert bsc["tokens"] == [
        {"token": "USDT", "contract": "0x55d398326f99059fF775485246999027B3197955", "decimals": 18},
        {"token": "USDC", "contract": "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", "decimals": 18},
    ]
    assert eth["explorerUrl"].startswith("https://etherscan.io/address/")


def test_mainnet_solana_accounts_use_the_mainnet_mints(desk, alice, settings, clock_advance):
    settings.CRYPTO_NETWORK = "mainnet"
    active = open_solana_address(desk, alice, clock_advance, "USDT")
    usdt = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
    assert active["tokens"] == [{"token": "USDT", "contract": usdt, "decimals": 6}]
    assert active["tokenAccount"] == associated_token_account(owner=active["address"], mint=usdt)


@pytest.mark.parametrize(
    "path", ["/client/crypto/deposit-address", "/secure/crypto/deposit-address"]
)
def test_crypto_off_in_this_environment_is_2500(desk, alice, settings, path):
    settings.CRYPTO_ENABLED = False
    headers = user_headers(desk, alice) if path.startswith("/client") else alice.headers
    response = desk.get(path, headers=headers, params={"chain": "ETH", "platformId": USER})
    assert_error(response, 503, 2500, "ONCHAIN_DISABLED")
    assert not AddressAllocation.objects.exists()


@pytest.mark.parametrize(
    "path", ["/client/crypto/deposit-address", "/secure/crypto/deposit-address"]
)
def test_unverified_merchant_is_2522(desk, db, path):
    unverified = make_actor(name="Unverified", is_verified=False)
    headers = user_headers(desk, unverified) if path.startswith("/client") else unverified.headers
    response = desk.get(path, headers=headers, params={"chain": "SOL", "platformId": USER})
    assert_error(response, 403, 2522, "ONCHAIN_MERCHANT_NOT_VERIFIED")
    assert not AddressAllocation.objects.exists()


def test_too_many_open_solana_accounts_is_2523_until_one_closes(
    desk, alice, settings, clock_advance
):
    settings.CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS = 1
    usdc = open_solana_address(desk, alice, clock_advance, "USDC")
    for path, headers in (
        ("/secure/crypto/deposit-address", alice.headers),
        ("/client/crypto/deposit-address", user_headers(desk, alice, partner=2)),
    ):
        response = desk.get(
            path, headers=headers, params={"chain": "SOL", "token": "USDT", "platformId": USER}
        )
        assert_error(response, 503, 2523, "ONCHAIN_ADDRESS_CAPACITY")
    # EVM addresses cost nothing on chain: no limit.
    assert deposit_address(desk, alice, "ETH")["status"] == "active"

    # A completed deposit sweeps the USDC account and closes it: a slot is free again.
    sent = data(send(desk, alice, "SOL", usdc["address"], "5"))
    assert data(confirm(desk, alice, sent["txHash"], 32))["deposit"]["status"] == "completed"
    assert deposit_address(desk, alice, "SOL", "USDT")["status"] == "pending"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "chain"),
        ({"chain": "TRX"}, "chain"),
        ({"chain": "SOL", "token": "DAI"}, "token"),
    ],
)
def test_bad_queries_are_validation_failed(desk, alice, params, field):
    response = desk.get(
        "/client/crypto/deposit-address", headers=user_headers(desk, alice), params=params
    )
    assert field in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]


@pytest.mark.parametrize("platform_id", [None, "7656119796026572", "12345678901234567", "x"])
def test_secure_route_needs_a_17_digit_platform_id(desk, alice, platform_id):
    params = {"chain": "ETH"} | ({"platformId": platform_id} if platform_id else {})
    response = desk.get("/secure/crypto/deposit-address", headers=alice.headers, params=params)
    assert "platformId" in assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"]


def test_client_route_needs_a_client_token(desk, alice):
    response = desk.get("/client/crypto/deposit-address", headers={}, params={"chain": "ETH"})
    assert_error(response, 401, 1108, "MISSING_BEARER")
    response = desk.get(
        "/client/crypto/deposit-address", headers=alice.headers, params={"chain": "ETH"}
    )
    assert_error(response, 401, 1108, "MISSING_BEARER")


def test_crypto_reads_share_one_rate_limit(desk, db, hooks):
    # Unverified: 10 per minute across deposit history, addresses and cashout history.
    unverified = make_actor(name="Small", is_verified=False)
    headers = user_headers(desk, unverified)
    for _ in range(5):
        assert desk.get("/client/crypto/deposits", headers=headers).status_code == 200
    for _ in range(3):
        response = desk.get(
            "/secure/crypto/deposits", headers=unverified.headers, params={"platformId": USER}
        )
        assert response.status_code == 200
    assert desk.get("/client/crypto/withdrawals", headers=headers).status_code == 200
    response = desk.get(
        "/secure/crypto/deposit-address",
        headers=unverified.headers,
        params={"chain": "ETH", "platformId": USER},
    )
    assert_error(response, 403, 2522, "ONCHAIN_MERCHANT_NOT_VERIFIED")  # the 10th: counted
    response = desk.get("/client/crypto/deposit-address", headers=headers, params={"chain": "ETH"})
    error = assert_error(response, 429, 1005, "RATE_LIMITED")
    assert error["message"]
    assert int(response["Retry-After"]) >= 1
    assert response["X-RateLimit-Limit"] == "10"
