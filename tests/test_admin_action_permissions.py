"""Staff actions that move money or change access need a permission beyond looking: the model's
change permission for the older actions, a permission of its own for each staff action taken
through a service with a reason (core.admin.staff). A staff member who may only look gets the
lists without them (Django then refuses to run them), and the row's page offers no button."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import RequestFactory

from crypto.models import AddressAllocation, CryptoDeposit, CryptoWithdrawal, SolanaTokenAccount
from merchants.models import ApiKey
from merchants.webhooks.models import WebhookEvent
from trading.models import SteamBot, Supplier, Trade

pytestmark = pytest.mark.django_db

# The model, its guarded actions, and the permissions that give them (codenames).
ACTIONS = [
    (CryptoWithdrawal, {"approve", "reject", "cancel"}, ["change_cryptowithdrawal"]),
    (CryptoDeposit, {"release", "refund"}, ["change_cryptodeposit"]),
    (Trade, {"retry_purchase", "cancel_trade"}, ["retry_purchase", "cancel_trade"]),
    (Supplier, {"switch_off", "switch_on"}, ["change_supplier"]),
    (ApiKey, {"revoke"}, ["change_apikey"]),
    (WebhookEvent, {"resend"}, ["resend_webhook"]),
    (SteamBot, {"log_in_again"}, ["log_in_bot"]),
    (AddressAllocation, {"sweep"}, ["sweep_address"]),
    (SolanaTokenAccount, {"sweep"}, ["sweep_address"]),
]
IDS = [model.__name__ for model, _, _ in ACTIONS]


def actions_for(model, *codenames: str) -> set[str]:
    name = model._meta.model_name
    user = User.objects.create_user(f"clerk-{name}-{'-'.join(codenames)}", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    request = RequestFactory().get("/admin/")
    request.user = User.objects.get(pk=user.pk)  # fresh: no cached permissions
    return set(admin.site._registry[model].get_actions(request))


@pytest.mark.parametrize(("model", "guarded", "granted"), ACTIONS, ids=IDS)
def test_viewers_get_none_of_the_actions(model, guarded, granted):
    assert actions_for(model, f"view_{model._meta.model_name}") & guarded == set()


@pytest.mark.parametrize(("model", "guarded", "granted"), ACTIONS, ids=IDS)
def test_staff_given_the_permission_get_them(model, guarded, granted):
    assert guarded <= actions_for(model, f"view_{model._meta.model_name}", *granted)


def test_each_staff_action_needs_its_own_permission_not_the_change_permission():
    # Changing a trade's row gives none of the trade's staff actions, and one action's
    # permission gives only that action.
    staff_actions = {"retry_purchase", "cancel_trade"}
    assert actions_for(Trade, "view_trade", "change_trade") & staff_actions == set()
    assert actions_for(Trade, "view_trade", "retry_purchase") & staff_actions == {"retry_purchase"}
