"""Every outbound client but the merchants' callbacks (tests/webhooks/test_deadlines.py) against
a server that drips its answer's head one byte at a time (tests/dripping.py): each call fails
within its deadline with the error that client gives a timeout today, and the server sees the
connection end by then. Each deadline is set to 1 s here; times are bounds measured with
time.monotonic, never slept."""

import threading
import time
from decimal import Decimal

import pytest

from crypto.chains.base import ChainError
from crypto.evm import node as evm_node
from crypto.solana import node as solana_node
from merchants.verification.base import ProviderUnavailableError
from merchants.verification.sumsub.provider import SumsubIdentityProvider
from tests.dripping import WEBSOCKET_HEADERS_DRIPPED, Drip, dripping
from tests.factories import trade_url
from tests.suppliers.servers import dmarket_keys
from trading.marketplace.suppliers import waxpeer_socket
from trading.marketplace.suppliers.base import BuyRequest, SupplierOutcomeUnknownError
from trading.marketplace.suppliers.dmarket import DMarketClient
from trading.marketplace.suppliers.http import SupplierHttp
from trading.marketplace.suppliers.waxpeer import WaxpeerClient
from trading.platform.base import PlatformUnavailableError
from trading.platform.steam.http import steam_request

DEADLINE = 1.0
SLACK = 1.5  # what a loaded test machine may add before the caller has its error


@pytest.fixture
def drip():
    with dripping() as server:
        yield server


def fails_within(seconds: float, error: type[Exception], call) -> Exception:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    with pytest.raises(error) as raised:
        call()
    elapsed = time.monotonic() - started
    assert elapsed < seconds + SLACK, f"{elapsed:.1f} s"
    return raised.value


def ended_in_time(drip: Drip, count: int = 1) -> None:
    for connection in drip.wait_ended(count):
        assert connection.ended_at is not None
        assert connection.ended_at - connection.opened_at < DEADLINE + SLACK


def test_steam_tries_each_attempt_for_its_deadline_then_is_unavailable(settings, drip):
    settings.STEAM_TIMEOUT_SECONDS = DEADLINE
    settings.STEAM_RETRIES = 1
    settings.STEAM_BACKOFF_SECONDS = 0.1
    url = f"{drip.url}/IEconService/GetTradeOffers/v1/"

    error = fails_within(
        2 * DEADLINE + 0.1, PlatformUnavailableError, lambda: steam_request("GET", url)
    )

    assert "did not answer" in str(error)
    assert len(drip.connections) == 2  # tried again, as after any timeout
    ended_in_time(drip, 2)


def buy_request() -> BuyRequest:
    return BuyRequest(
        reference="ti-1",
        offer_ref="27165625733",
        asset_ref="27165625733",
        market_hash_name="AK-47 | Redline (Field-Tested)",
        price=Decimal("11.03"),
        game=730,
        trade_url=trade_url(42),
    )


def test_a_waxpeer_buy_whose_answer_drips_has_an_unknown_outcome(drip):
    client = WaxpeerClient(http=SupplierHttp(drip.url, 0.5, 0.5), api_key="wax-test-key")

    error = fails_within(DEADLINE, SupplierOutcomeUnknownError, lambda: client.buy(buy_request()))

    assert "answer lost" in str(error)
    ended_in_time(drip)


def test_a_dmarket_buy_whose_answer_drips_has_an_unknown_outcome(drip):
    public, secret = dmarket_keys()
    client = DMarketClient(
        http=SupplierHttp(drip.url, 0.5, 0.5),
        public_key=public,
        secret_key=secret,
        bot_steam_id="76561199100000001",
    )

    error = fails_within(DEADLINE, SupplierOutcomeUnknownError, lambda: client.buy(buy_request()))

    assert "answer lost" in str(error)
    ended_in_time(drip)


def test_the_waxpeer_socket_gives_up_a_dripped_handshake_and_connects_again(monkeypatch):
    monkeypatch.setattr(waxpeer_socket, "CONNECT_TIMEOUT_SECONDS", DEADLINE)
    monkeypatch.setattr(waxpeer_socket, "FIRST_RETRY_SECONDS", 0.1)
    states: list[bool] = []
    stop = threading.Event()
    with dripping(head=WEBSOCKET_HEADERS_DRIPPED) as server:
        feed = waxpeer_socket.WaxpeerSocket(
            url=server.url,
            path="socket.io",
            api_key="wax-test-key",
            games=(730,),
            on_change=lambda change: None,
            on_state=states.append,
        )
        thread = threading.Thread(target=feed.run, args=(stop,), daemon=True)
        thread.start()
        try:
            ended_in_time(server, 2)  # the first handshake given up, and the next one
        finally:
            stop.set()
            thread.join(DEADLINE + SLACK)
    assert not thread.is_alive()
    assert states == []  # never connected


def test_sumsub_is_unavailable_once_its_deadline_passed(settings, drip):
    settings.SUMSUB_BASE_URL = drip.url
    settings.SUMSUB_TIMEOUT_SECONDS = DEADLINE
    settings.SUMSUB_APP_TOKEN = "app-token"
    settings.SUMSUB_SECRET_KEY = "secret-key"
    settings.SUMSUB_WEBHOOK_SECRET = "webhook-secret"
    settings.SUMSUB_LEVEL_NAME = "basic-kyc-level"
    provider = SumsubIdentityProvider()

    error = fails_within(
        DEADLINE,
        ProviderUnavailableError,
        lambda: provider.start(tenant="m-1", reference="ref-1", email=""),
    )

    assert "timed out" in str(error)
    ended_in_time(drip)


def test_an_evm_node_that_drips_is_a_chain_error(monkeypatch, drip):
    monkeypatch.setattr(evm_node, "RPC_TIMEOUT_SECONDS", DEADLINE)

    error = fails_within(DEADLINE, ChainError, lambda: evm_node.Node(drip.url).head())

    assert "eth_blockNumber" in str(error)
    ended_in_time(drip)


def test_a_solana_node_that_drips_is_a_chain_error(monkeypatch, drip):
    monkeypatch.setattr(solana_node, "RPC_TIMEOUT_SECONDS", DEADLINE)

    error = fails_within(
        DEADLINE, ChainError, lambda: solana_node.SolanaNode(drip.url).block_height()
    )

    assert "getBlockHeight" in str(error)
    ended_in_time(drip)
