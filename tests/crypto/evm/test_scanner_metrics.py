"""The EVM scanner in the metrics, against a real node: read at scrape time from what each scan
step stores (the head it saw, the last block read), so a scrape never asks the node."""

from django.test import override_settings

from core.metrics import metrics_exposition
from crypto.evm.scanner import evm_deposits_scan_step
from crypto.services.deposits import crypto_deposit_observe
from tests.crypto.evm.chain import Chain
from tests.ops.metrics import parsed, value

ETH = {"chain": "ETH"}


def scraped() -> dict:
    return parsed(metrics_exposition().decode())[1]


def test_the_scrape_shows_how_far_behind_the_head_each_step_left_the_scanner(chain: Chain):
    first = scraped()
    assert value(first, "trading_evm_scanner_lag_blocks", ETH) == 0  # the fixture scanned
    chain.mine(25)
    with override_settings(CRYPTO_EVM_SCAN_BLOCKS=10):
        step = evm_deposits_scan_step(chain="ETH", observe=crypto_deposit_observe)
        assert step.end - step.start + 1 == 10
        behind = scraped()
        assert value(behind, "trading_evm_scanner_lag_blocks", ETH) == 15  # 25 new, 10 read
        assert value(behind, "trading_evm_scanner_last_block", ETH) == step.end
        assert value(behind, "trading_evm_scanner_last_scan_age_seconds", ETH) < 60
        while value(scraped(), "trading_evm_scanner_lag_blocks", ETH) > 0:
            evm_deposits_scan_step(chain="ETH", observe=crypto_deposit_observe)
    caught_up = scraped()
    assert value(caught_up, "trading_evm_scanner_last_block", ETH) == step.end + 15
    assert value(caught_up, "trading_evm_scanner_lag_seconds", ETH) == 0
