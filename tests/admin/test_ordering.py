"""Every list of the staff console shows the newest rows first: ordered by a time, descending,
with the primary key last so rows of the same instant keep one order. A new admin page that
forgets its ordering fails here (the default order of a UUID key is random)."""

from datetime import timedelta

import pytest
from django.contrib import admin
from django.db import models
from django.db.models.constants import LOOKUP_SEP

from merchants.models import Merchant
from tests.factories import MerchantFactory
from trading.models import CatalogItem, GameSettings

# Reference data with no time of any kind: listed in their natural order instead.
TIMELESS = {
    CatalogItem: "catalog entries: by game, then by name",
    GameSettings: "one row per game: by game",
}

OURS = [
    (model, model_admin)
    for model, model_admin in admin.site._registry.items()
    if not type(model_admin).__module__.startswith("django.")
]


def resolve(model: type[models.Model], path: str) -> models.Field:
    """The field a (possibly related, ``merchant__created_at``) ordering path ends on."""
    *relations, name = path.split(LOOKUP_SEP)
    for relation in relations:
        model = model._meta.get_field(relation).related_model
    return model._meta.get_field(name)


def test_the_project_registers_its_pages():
    assert len(OURS) > 20  # the filter above keeps our pages, not none of them


@pytest.mark.parametrize(("model", "model_admin"), OURS, ids=[m._meta.label for m, _ in OURS])
def test_each_list_is_ordered_newest_first_with_the_key_last(model, model_admin):
    ordering = list(model_admin.get_ordering(request=None))
    assert ordering, f"{type(model_admin).__name__} has no ordering"
    assert resolve(model, ordering[-1].lstrip("-")).primary_key, "the key breaks ties"
    if model in TIMELESS:
        assert not any(isinstance(f, models.DateTimeField) for f in model._meta.fields)
        return
    newest = ordering[0]
    assert newest.startswith("-"), f"{model._meta.label}: {newest} is not descending"
    assert isinstance(resolve(model, newest[1:]), models.DateTimeField), newest
    # A creation time, when the row has one, is what "newest" means.
    if any(f.name == "created_at" for f in model._meta.fields):
        assert newest == "-created_at"


@pytest.mark.django_db
def test_the_merchant_list_shows_the_newest_first_whatever_their_ids(admin_client):
    merchants = sorted(MerchantFactory.create_batch(3), key=lambda m: m.pk, reverse=True)
    # The highest id is the oldest: the admin's fallback order (by id, descending) would show
    # it first.
    start = merchants[0].created_at
    for age, merchant in enumerate(merchants):
        Merchant.objects.filter(pk=merchant.pk).update(created_at=start + timedelta(hours=age))

    listed = list(admin_client.get("/admin/merchants/merchant/").context["cl"].result_list)

    assert [m.pk for m in listed] == [m.pk for m in reversed(merchants)]
