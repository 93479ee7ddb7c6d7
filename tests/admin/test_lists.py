"""Lists name a row's merchant (linked, by name) and load it with the rows, in one query."""

from django.contrib import admin

from merchants.console import merchant_column


def test_every_list_with_the_merchant_column_loads_the_merchant_with_its_rows():
    listing = [
        model_admin
        for model_admin in admin.site._registry.values()
        if merchant_column in model_admin.list_display
    ]
    assert len(listing) >= 10
    for model_admin in listing:
        assert "merchant" in model_admin.list_select_related, type(model_admin).__name__


def test_no_list_shows_the_merchant_by_its_long_name_and_id():
    for model_admin in admin.site._registry.values():
        assert "merchant" not in model_admin.list_display, type(model_admin).__name__
