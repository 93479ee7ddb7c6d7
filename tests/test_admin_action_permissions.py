"""Staff actions that move money or change access need the model's change permission; a staff
member who may only look gets the lists without them (Django then refuses to run them)."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import RequestFactory

from crypto.models import CryptoDeposit, CryptoWithdrawal
from merchants.models import ApiKey
from merchants.webhooks.models import WebhookEvent
from trading.models import Supplier, Trade

pytestmark = pytest.mark.django_db

ACTIONS = [
    (CryptoWithdrawal, {"approve", "reject", "cancel"}),
    (CryptoDeposit, {"release", "refund"}),
    (Trade, {"force_cancel"}),
    (Supplier, {"switch_off", "switch_on"}),
    (ApiKey, {"revoke"}),
    (WebhookEvent, {"resend"}),
]


def actions_for(model, *verbs: str) -> set[str]:
    name = model._meta.model_name
    user = User.objects.create_user(f"clerk-{name}-{len(verbs)}", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(codename__in=[f"{verb}_{name}" for verb in verbs])
    )
    request = RequestFactory().get("/admin/")
    request.user = User.objects.get(pk=user.pk)  # fresh: no cached permissions
    return set(admin.site._registry[model].get_actions(request))


@pytest.mark.parametrize(("model", "guarded"), ACTIONS, ids=[m.__name__ for m, _ in ACTIONS])
def test_viewers_get_none_of_the_actions(model, guarded):
    assert actions_for(model, "view") & guarded == set()


@pytest.mark.parametrize(("model", "guarded"), ACTIONS, ids=[m.__name__ for m, _ in ACTIONS])
def test_staff_who_may_change_get_them(model, guarded):
    assert guarded <= actions_for(model, "view", "change")
