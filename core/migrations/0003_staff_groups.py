"""The console's two staff groups (issue 40, docs/admin.md "Who may do what"): ``support`` reads
what a merchant's call is about and may re-send a webhook, retry a purchase and cancel a trade;
``ops`` reads the machinery too (bots, suppliers, chains, the wallet check) and may log a bot in
again, sweep a deposit address, switch a supplier, re-send a webhook, retry a purchase and turn
maintenance on. Neither moves money by hand nor decides cashouts or frozen deposits: that stays
with the people given those permissions one by one. A staff member is put in a group in the
console (Authentication > Users); a superuser has everything.

Permissions are made here for every app first (Django makes them only after all migrations, and
a group needs them now); a codename that is gone fails the migration instead of giving less."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

# What support reads: trades and what they touch, merchants and their webhooks, the money.
SUPPORT_READS = {
    "trading": ["trade", "tradeitem", "tradeevent", "botdelivery", "steamoffer", "steambot",
                "supplier", "suppliererror", "catalogitem"],
    "merchants": ["merchant", "client", "apikey", "webhookevent", "webhookdelivery"],
    "crypto": ["cryptodeposit", "cryptowithdrawal", "addressallocation"],
    "ledger": ["funding"],
    "wallet": ["account", "transfer", "posting", "walletcheck"],
    "core": ["staffaction"],
    "admin": ["logentry"],
}
# What ops read besides: the chains' bookkeeping, the switches, the games' settings.
OPS_READS = {
    "crypto": ["evmcursor", "evmsweep", "evmtransaction", "evmattempt", "solanatokenaccount",
               "solanasweep", "solanatransaction", "solanaattempt"],
    "core": ["servicesettings"],
    "trading": ["gamesettings"],
}
GROUPS = {
    "support": {
        "reads": [SUPPORT_READS],
        "may": ["merchants.resend_webhook", "trading.retry_purchase", "trading.cancel_trade"],
    },
    "ops": {
        "reads": [SUPPORT_READS, OPS_READS],
        "may": [
            "trading.log_in_bot",
            "crypto.sweep_address",
            "merchants.resend_webhook",
            "trading.retry_purchase",
            "trading.change_supplier",
            "trading.add_steambot",
            "trading.change_steambot",
            "core.change_servicesettings",
        ],
    },
}


def _codenames(group):
    for reads in group["reads"]:
        for app_label, models in reads.items():
            for model in models:
                yield app_label, f"view_{model}"
    for permission in group["may"]:
        app_label, codename = permission.split(".")
        yield app_label, codename


def _groups_create(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, group in GROUPS.items():
        wanted = sorted(set(_codenames(group)))
        found = []
        for app_label, codename in wanted:
            permission = Permission.objects.filter(
                content_type__app_label=app_label, codename=codename
            ).first()
            if permission is None:
                raise RuntimeError(f"group {name}: no permission {app_label}.{codename}")
            found.append(permission)
        row, _ = Group.objects.get_or_create(name=name)
        row.permissions.set(found)


def _groups_drop(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=list(GROUPS)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_staff_actions_clock_shifts"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("trading", "0017_trade_console"),
        ("crypto", "0007_cashout_console"),
        ("merchants", "0010_webhook_console"),
        ("wallet", "0005_wallet_checks"),
        ("ledger", "0002_ledger_staff_transfers"),
    ]

    operations = [migrations.RunPython(_groups_create, _groups_drop)]
