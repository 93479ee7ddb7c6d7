"""``manage.py reseal_secrets``: the second step of rotating ``SECRETS_ENCRYPTION_KEYS``
(docs/ops/rotation.md). With the new key first and the old ones after it, every sealed value
(each ``*_sealed`` column of every model: ``core.sealed``) is sealed again under the new key,
row by row under the row's lock, while the service runs. ``--check`` changes nothing and fails
while any value is not sealed under the first key: once it passes, the old keys can go."""

import json
from argparse import ArgumentParser
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.db.models import Model

from core.sealed import SealedSecretError, reseal, sealed_under_first_key

SEALED_SUFFIX = "_sealed"


def sealed_columns() -> list[tuple[type[Model], list[str]]]:
    """Each model with sealed values, and the names of its sealed fields."""
    found = []
    for model in apps.get_models():
        names = [f.name for f in model._meta.concrete_fields if f.name.endswith(SEALED_SUFFIX)]
        if names:
            found.append((model, names))
    return found


class Command(BaseCommand):
    help = (
        "Seal every stored secret again under the first of SECRETS_ENCRYPTION_KEYS (the others "
        "still open them meanwhile). --check: change nothing, fail while any is not sealed "
        "under the first key. Prints {resealed, notUnderFirstKey, unreadable}."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--check", action="store_true", help="count, change nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        check = options["check"]
        resealed, waiting, unreadable = 0, 0, []
        for model, names in sealed_columns():
            label, rows = model._meta.label, model._default_manager
            for pk in list(rows.order_by("pk").values_list("pk", flat=True)):
                with transaction.atomic():
                    row = rows.select_for_update().filter(pk=pk).values(*names).first()
                    if row is None:
                        continue  # deleted meanwhile
                    changed = {}
                    for name in names:
                        value = row[name]
                        if sealed_under_first_key(value):
                            continue
                        try:
                            changed[name] = reseal(value)  # also proves a key still opens it
                        except SealedSecretError:
                            unreadable.append(f"{label} {pk} {name}")
                    if check:
                        waiting += len(changed)
                    elif changed:
                        rows.filter(pk=pk).update(**changed)
                        resealed += len(changed)
        self.stdout.write(
            json.dumps(
                {"resealed": resealed, "notUnderFirstKey": waiting, "unreadable": unreadable}
            )
        )
        if unreadable:
            raise CommandError(
                f"{len(unreadable)} sealed values open with no configured key: keep the key "
                "that sealed them, or enter those secrets again."
            )
        if waiting:
            raise CommandError(f"{waiting} sealed values are not under the first key yet.")
