"""Staff see each supplier's health, balance and newest errors, and switch it off and on."""

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry

from tests.suppliers.servers import Listing
from trading.models import Supplier, SupplierListing
from trading.services.suppliers import supplier_balances_check, supplier_listings_poll

pytestmark = pytest.mark.django_db


def test_staff_see_health_balance_and_errors_and_switch_a_supplier(
    admin_client, suppliers, catalog_item
):
    suppliers.waxpeer.world.listings["1"] = Listing(
        ref="1", name=catalog_item.market_hash_name, price=5_000
    )
    suppliers.waxpeer.world.balance = 42_500
    supplier_balances_check()
    suppliers.dmarket.world.fault = "maintenance"
    supplier_listings_poll(name="dmarket")
    supplier_listings_poll(name="waxpeer")

    page = admin_client.get("/admin/trading/supplier/").content.decode()
    assert "42.50" in page
    assert "degraded" in page
    detail = admin_client.get("/admin/trading/supplier/dmarket/change/").content.decode()
    assert "HTTP 503 (maintenance or outage)" in detail

    response = admin_client.post(
        "/admin/trading/supplier/",
        {
            "action": "switch_off",
            "_selected_action": ["waxpeer"],
            "staff_confirm": "yes",
            "reason": "Waxpeer sellers are not sending",
        },
    )
    assert response.status_code == 302
    assert Supplier.objects.get(pk="waxpeer").enabled is False
    assert not SupplierListing.objects.exists()
    assert LogEntry.objects.filter(object_id="waxpeer").exists()
    assert Supplier.objects.get(pk="waxpeer").balance == Decimal("42.50")


def test_check_warns_when_no_supplier_is_configured(settings):
    from django.core import checks

    from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE

    settings.MARKETPLACE = SUPPLIER_MARKETPLACE
    settings.WAXPEER_API_KEY = ""
    settings.DMARKET_PUBLIC_KEY = ""
    assert "trading.W003" in {message.id for message in checks.run_checks()}
    settings.WAXPEER_API_KEY = "key"
    assert "trading.W003" not in {message.id for message in checks.run_checks()}


def test_staff_read_balances_and_switch_a_supplier_back_on(admin_client, suppliers, catalog_item):
    suppliers.waxpeer.world.balance = 12_345  # thousandths
    suppliers.dmarket.world.balance = 678  # cents
    suppliers.waxpeer.world.listings["1"] = Listing(
        ref="1", name=catalog_item.market_hash_name, price=5_000
    )
    response = admin_client.post(
        "/admin/trading/supplier/",
        {"action": "check_balances", "_selected_action": ["waxpeer"]},
        follow=True,
    )
    assert "2 supplier balance(s) read." in response.content.decode()
    page = admin_client.get("/admin/trading/supplier/").content.decode()
    assert "12.35" in page  # rounded to the cent for display
    assert "6.78" in page

    Supplier.objects.filter(pk="waxpeer").update(enabled=False)
    assert "switched off" in admin_client.get("/admin/trading/supplier/").content.decode()
    response = admin_client.post(
        "/admin/trading/supplier/",
        {
            "action": "switch_on",
            "_selected_action": ["waxpeer"],
            "staff_confirm": "yes",
            "reason": "Waxpeer is sending again",
        },
    )
    assert response.status_code == 302
    assert Supplier.objects.get(pk="waxpeer").enabled is True
    assert supplier_listings_poll(name="waxpeer") == 1  # polled again: its listing is back
    assert SupplierListing.objects.filter(pk="waxpeer-1").exists()


def test_check_warns_when_dmarket_has_no_bot_to_deliver_to(settings):
    from django.core import checks

    from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE, supplier_names

    settings.MARKETPLACE = SUPPLIER_MARKETPLACE
    settings.MARKETPLACE_SUPPLIERS = ["dmarket"]
    settings.DMARKET_PUBLIC_KEY, settings.DMARKET_SECRET_KEY = "ab" * 32, "cd" * 64
    settings.DMARKET_BOT_STEAM_ID = ""
    assert "trading.W004" in {message.id for message in checks.run_checks()}
    assert supplier_names() == []  # not used without it
    settings.DMARKET_BOT_STEAM_ID = "76561199100000001"
    assert "trading.W004" not in {message.id for message in checks.run_checks()}
    assert supplier_names() == ["dmarket"]
