"""The scanner's lag in the metrics, against a real node: blocks between the head and the last
block a scan step read, as that step saw them."""

from django.test import override_settings

from core.metrics import EVM_SCANNER_LAG
from crypto.evm.models import EvmCursor
from crypto.evm.scanner import evm_deposits_scan_step
from tests.crypto.evm.chain import Chain


def lag() -> float:
    return EVM_SCANNER_LAG.labels("ETH")._value.get()


def test_a_step_records_how_far_behind_the_head_it_ended(chain: Chain):
    chain.mine(25)
    with override_settings(CRYPTO_EVM_SCAN_BLOCKS=10):
        step = evm_deposits_scan_step(chain="ETH")
        head = EvmCursor.objects.get(chain="ETH").next_block - 1 + lag()
        assert step.end - step.start + 1 == 10
        assert lag() >= 15  # 25 new blocks, 10 read
        while lag() > 0:
            evm_deposits_scan_step(chain="ETH")
    assert EvmCursor.objects.get(chain="ETH").next_block - 1 == head
    evm_deposits_scan_step(chain="ETH")  # nothing new: no lag
    assert lag() == 0
