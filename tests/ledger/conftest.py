import json
import uuid
from datetime import datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from ledger.models import Funding
from ledger.services import funding_record
from tests.factories import Actor

LIST = "/v1/ledger/transactions"


def fund(
    actor: Actor,
    *,
    type: str = "DEPOSIT",
    status: str = "COMPLETED",
    amount: str = "10.00",
    created_at: datetime | None = None,
    **fields: object,
) -> Funding:
    """A funding row as the crypto side records it (its own source each time)."""
    return funding_record(
        merchant=actor.merchant,
        type=type,
        status=status,
        amount_usd=Decimal(amount),
        source_type="test",
        source_id=str(uuid.uuid4()),
        created_at=created_at,
        **fields,
    )


def body(response) -> dict:
    """The envelope with numbers as Decimal, so money compares exactly."""
    return json.loads(response.content, parse_float=Decimal)


def data(response):
    assert response.status_code == 200, response.content
    envelope = body(response)
    assert envelope["success"] is True
    return envelope["data"]


def ledger(api, actor: Actor, **query: object) -> dict:
    return data(api.get(LIST, query, headers=actor.headers))


def ids(page: dict) -> list[str]:
    return [row["id"] for row in page["items"]]


@pytest.fixture
def staff(client):
    """A logged-in superuser in the Django admin."""
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-ops-123")
    client.force_login(user)
    return client


def change_form_data(client, url: str) -> dict[str, object]:
    """What an admin add or change form would post back untouched (its current values)."""
    form = client.get(url).context["adminform"].form
    posted: dict[str, object] = {}
    for name in form.fields:
        value = form[name].value()
        if value is True:
            posted[name] = "on"
        elif value is not None and value is not False:
            posted[name] = value
    return posted


# The withdrawal suite's world (a funded merchant with a live receiver, a catalog item, the
# desk that runs on-commit work, eager Celery) for the staff force-cancel audit.
from tests.withdrawals.conftest import (  # noqa: E402
    _eager_celery,  # noqa: F401
    alice_funded,  # noqa: F401
    catalog_item,  # noqa: F401
    desk,  # noqa: F401
    hooks,  # noqa: F401
)
