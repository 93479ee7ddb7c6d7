"""Address derivation against published vectors of the libraries' ecosystems, and the checks
cashout addresses go through."""

import pytest

from crypto.keys import (
    associated_token_account,
    evm_address,
    evm_address_valid,
    hot_wallet,
    solana_address_valid,
    solana_owner,
)

HARDHAT = "test test test test test test test test test test test junk"
# Solana cookbook, "Restoring BIP44 format mnemonics".
COOKBOOK = "neither lonely flavor argue grass remind eye tag avocado spot unusual intact"


@pytest.mark.parametrize(
    ("index", "address"),
    [
        (0, "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"),
        (1, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"),
        (2, "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"),
    ],
)
def test_evm_addresses_are_the_hardhat_accounts_of_the_test_mnemonic(index, address):
    assert evm_address(index, mnemonic=HARDHAT) == address


@pytest.mark.parametrize(
    ("index", "owner"),
    [
        (0, "5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N"),
        (1, "GcXbfQ5yY3uxCyBNDPBbR5FjumHf89E7YHXuULfGDBBv"),
        (2, "7QPgyQwNLqnoSwHEuK8wKy2Y3Ani6EHoZRihTuWkwxbc"),
    ],
)
def test_solana_owners_follow_m_44_501_index_0(index, owner):
    assert solana_owner(index, mnemonic=COOKBOOK) == owner


def test_associated_token_account_matches_the_spl_token_vector():
    # spl-token's own unit test: getAssociatedTokenAddress(mint, owner).
    ata = associated_token_account(
        owner="B8UwBUUnKwCyKuGMbFKWaG7exYdDk2ozZrPg72NyVbfj",
        mint="7o36UsWR1JQLpZ9PE2gn9L4SQ69CNNiWAXd4Jt7rqz9Z",
    )
    assert ata == "DShWnroshVbeUp28oopA3Pu7oFPDBtC1DBmPECXXAQ9n"


def test_the_service_key_is_the_configured_mnemonic(settings):
    assert settings.CRYPTO_HD_MNEMONIC == HARDHAT  # the sandbox default
    assert evm_address(3) == "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
    settings.CRYPTO_HD_MNEMONIC = COOKBOOK
    assert solana_owner(0) == "5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N"
    assert hot_wallet("SOL") == "5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N"
    assert hot_wallet("ETH") == evm_address(0, mnemonic=COOKBOOK)


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("0x70997970C51812dc3A010C7d01b50e0d17dc79C8", True),
        ("0x70997970c51812dc3a010c7d01b50e0d17dc79c8", False),  # no checksum to check
        ("0x70997970C51812dc3A010C7d01b50e0d17dc79c8", False),  # one letter's case wrong
        ("0x70997970C51812dc3A010C7d01b50e0d17dc79C", False),
        ("70997970C51812dc3A010C7d01b50e0d17dc79C8", False),
        ("0xZZ997970C51812dc3A010C7d01b50e0d17dc79C8", False),
    ],
)
def test_evm_addresses_must_carry_a_valid_eip55_checksum(address, valid):
    assert evm_address_valid(address) is valid


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N", True),
        ("11111111111111111111111111111111", True),  # the system program: 32 zero bytes
        ("1111111111111111111111111111111", False),  # 31 zero bytes
        ("5vftMkHL72JaJG6ExQfGAsT2uGVHpRR7oTNUPMs68Y2N0", False),  # 0 is not base58
        ("0x70997970C51812dc3A010C7d01b50e0d17dc79C8", False),
        ("", False),
    ],
)
def test_solana_addresses_are_base58_of_32_bytes(address, valid):
    assert solana_address_valid(address) is valid
