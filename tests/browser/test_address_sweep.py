"""Ops sweep a deposit address the way a person does in a real browser: from the address's
page, with a reason; a real EVM node (anvil) takes the transfers, and the request is kept with
the staff member's name and reason. No USD moves."""

from decimal import Decimal

import pytest
from selenium.webdriver.common.by import By

from core.models import StaffAction
from crypto.evm.models import EvmSweep
from crypto.models import AddressAllocation
from tests.browser.conftest import HEIGHT, STAFF, WIDTH, log_in, screenshot, wait_for
from tests.crypto.conftest import alice, clean, deposit_address, hooks, money
from tests.crypto.evm.conftest import chain
from tests.crypto.evm.test_sweeps import credited
from wallet.models import Transfer

__all__ = ["alice", "chain", "hooks"]

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def test_sweep_a_deposit_address_from_its_page(browser, live_server, staff, desk, alice, chain):
    address = deposit_address(desk, alice, "ETH")["address"]
    credited(desk, chain, chain.usdc, address, "7")
    chain.set_balance(address, 10**18)  # gas enough: no top-up
    allocation = AddressAllocation.objects.get(evm_address=address)
    transfers, balances = Transfer.objects.count(), money(alice)
    browser.set_window_size(WIDTH, HEIGHT)
    log_in(browser, live_server.url, f"/admin/crypto/addressallocation/{allocation.pk}/change/")

    tool = next(
        tool
        for tool in browser.find_elements(By.CSS_SELECTOR, ".object-tools a.staff-action")
        if tool.text.lower() == "sweep to the hot wallet"
    )
    tool.click()
    wait_for(browser, "#staff-action-form textarea[name=reason]").send_keys(
        "User closed their account: collect the dust"
    )
    screenshot(browser, "action-sweep")
    browser.find_element(By.CSS_SELECTOR, "#staff-action-form [name=staff_submit]").click()
    shown = wait_for(browser, "ul.messagelist").text

    assert "Sweeps requested: EVM (ETH)." in shown
    [sweep] = EvmSweep.objects.all()
    assert (sweep.token, sweep.amount, sweep.status, sweep.trigger) == (
        "USDC",
        Decimal("7"),
        "sweeping",
        "staff",
    )
    action = StaffAction.objects.get()
    assert (action.user, action.action, action.subject_id) == (
        STAFF,
        "sweep_address",
        str(allocation.pk),
    )
    assert action.reason == "User closed their account: collect the dust"
    assert Transfer.objects.count() == transfers  # tokens move, no USD
    assert money(alice) == balances
    assert clean()
