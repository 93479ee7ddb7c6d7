"""The chains and their tokens, per network (CRYPTO_NETWORK). Contract addresses are the real
ones of each network; docs/decisions.md ("Crypto") says where each testnet one was checked."""

from dataclasses import dataclass, replace

from django.conf import settings

ETH = "ETH"
BSC = "BSC"
SOL = "SOL"
CHAINS = (ETH, BSC, SOL)
EVM_CHAINS = (ETH, BSC)
USDT = "USDT"
USDC = "USDC"
TOKENS = (USDT, USDC)


@dataclass(frozen=True)
class Token:
    symbol: str
    contract: str  # ERC-20/BEP-20 contract, or SPL mint
    decimals: int


@dataclass(frozen=True)
class Network:
    chain: str
    name: str
    testnet: bool
    tokens: dict[str, Token]
    explorer: str  # address page, "{address}" filled in
    tx_explorer: str
    chain_id: int | None = None  # EIP-155 id an EVM chain's node must answer (eth_chainId)

    def token(self, symbol: str) -> Token:
        return self.tokens[symbol]


def _network(
    chain: str,
    name: str,
    *,
    testnet: bool,
    usdt: str,
    usdc: str,
    decimals: int,
    explorer: str,
    cluster: str = "",
    chain_id: int | None = None,
) -> Network:
    """A network whose USDT and USDC have ``decimals`` each, its explorer's address and
    transaction pages under ``explorer`` (on Solana's explorer, in ``cluster``)."""
    query = f"?cluster={cluster}" if cluster else ""
    return Network(
        chain=chain,
        name=name,
        testnet=testnet,
        tokens={USDT: Token(USDT, usdt, decimals), USDC: Token(USDC, usdc, decimals)},
        explorer=f"{explorer}/address/{{address}}{query}",
        tx_explorer=f"{explorer}/tx/{{tx}}{query}",
        chain_id=chain_id,
    )


MAINNET = {
    ETH: _network(
        ETH,
        "ethereum-mainnet",
        testnet=False,
        usdt="0xdAC17F958D2ee523a2206206994597C13D831ec7",
        usdc="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        decimals=6,
        explorer="https://etherscan.io",
        chain_id=1,
    ),
    BSC: _network(
        BSC,
        "bsc-mainnet",
        testnet=False,
        usdt="0x55d398326f99059fF775485246999027B3197955",
        usdc="0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d",
        decimals=18,
        explorer="https://bscscan.com",
        chain_id=56,
    ),
    SOL: _network(
        SOL,
        "solana-mainnet",
        testnet=False,
        usdt="Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
        usdc="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        decimals=6,
        explorer="https://explorer.solana.com",
    ),
}

TESTNET = {
    ETH: _network(
        ETH,
        "ethereum-sepolia",
        testnet=True,
        # Tether has no Sepolia deployment: Aave's faucet USDT is the one testnets use.
        usdt="0xaA8E23Fb1079EA71e0a56F48a2aA51851D8433D0",
        usdc="0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
        decimals=6,
        explorer="https://sepolia.etherscan.io",
        chain_id=11155111,
    ),
    BSC: _network(
        BSC,
        "bsc-testnet",
        testnet=True,
        usdt="0x337610d27c682E347C9cD60BD4b3b107C9d34dDd",
        usdc="0x64544969ed7EBf5f083679233325356EbE738930",
        decimals=18,
        explorer="https://testnet.bscscan.com",
        chain_id=97,
    ),
    SOL: _network(
        SOL,
        "solana-devnet",
        testnet=True,
        usdt="EJwZgeZrdC8TXTQbQBoL6bfuAnFUUy1PVCMB4DYPzVaS",
        usdc="4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
        decimals=6,
        explorer="https://explorer.solana.com",
        cluster="devnet",
    ),
}


def network(chain: str) -> Network:
    """The chain as the configured network has it (CRYPTO_NETWORK), with the token contracts an
    operator named for it (CRYPTO_<CHAIN>_TOKENS) in place of the built-in ones."""
    known = (TESTNET if settings.CRYPTO_NETWORK == "testnet" else MAINNET)[chain]
    named = settings.CRYPTO_TOKEN_CONTRACTS.get(chain)
    if not named:
        return known
    tokens = {s: Token(s, contract, decimals) for s, (contract, decimals) in named.items()}
    return replace(known, tokens=known.tokens | tokens)


def min_deposit_cents(chain: str) -> int:
    return int(settings.CRYPTO_MIN_DEPOSIT_CENTS[chain])


def min_confirmations(chain: str) -> int:
    return int(settings.CRYPTO_MIN_CONFIRMATIONS[chain])
