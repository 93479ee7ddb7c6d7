"""JSON in the console reads as JSON: webhook payloads, a trade's bot and event details and the
merchant's risk policy are indented, and whatever text they carry is escaped."""

import html
import json
import re

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import models, transaction
from django.test import RequestFactory

from core.admin_display import IndentedJSONField
from merchants.models import Merchant
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.outbox import webhook_event_emit

pytestmark = pytest.mark.django_db

# Short lists of names read well on one line, as Django shows them.
ONE_LINE = {("merchants.ApiKey", "scopes"), ("merchants.ApiKey", "ip_whitelist")}
BLOCK = re.compile(r'<pre class="json">(.*?)</pre>', re.DOTALL)


def blocks(page: str) -> list[str]:
    """The text of each JSON block of a page, unescaped."""
    return [html.unescape(text) for text in BLOCK.findall(page)]


def test_a_webhook_payload_is_shown_indented(admin_client, trades):
    event = WebhookEvent.objects.filter(subject_id=str(trades.alice_deposit.pk)).latest("sequence")

    page = admin_client.get(f"/admin/merchants/webhookevent/{event.pk}/change/").content.decode()

    [shown] = blocks(page)
    assert json.loads(shown) == event.payload
    assert shown == json.dumps(event.payload, indent=2, ensure_ascii=False)
    assert '\n  "trade": {\n    ' in shown


def test_markup_inside_a_payload_is_escaped(admin_client, alice):
    markup = '</pre><script>alert("hi")</script>'
    with transaction.atomic():
        event = webhook_event_emit(
            merchant=alice.merchant,
            type="trade.initiated",
            subject_type="trade",
            subject_id="t-1",
            sequence=1,
            body_key="trade",
            body={"externalId": markup},
        )

    page = admin_client.get(f"/admin/merchants/webhookevent/{event.pk}/change/").content.decode()

    assert "<script>" not in page
    assert json.loads(blocks(page)[0])["trade"]["externalId"] == markup


def test_a_trade_shows_its_bot_indented_and_a_staff_reason_escaped(admin_client, trades):
    deposit = trades.alice_deposit
    page = admin_client.get(f"/admin/trading/trade/{deposit.pk}/change/").content.decode()
    assert deposit.bot_info
    assert deposit.bot_info in [json.loads(text) for text in blocks(page)]

    buy = trades.alice_buy
    reason = 'merchant asked <b>"now"</b>'
    admin_client.post(f"/admin/trading/trade/{buy.pk}/staff/cancel_trade/", {"reason": reason})
    page = admin_client.get(f"/admin/trading/trade/{buy.pk}/change/").content.decode()
    assert "<b>" not in page
    assert html.escape(f"reason: {reason}", quote=True) in page


def test_the_risk_policy_is_edited_indented_and_saved_as_typed(admin_client, alice):
    Merchant.objects.filter(pk=alice.merchant.pk).update(risk_policy={"cap_kyc3": 8000})
    url = f"/admin/merchants/merchant/{alice.merchant.pk}/change/"

    form = admin_client.get(url).context["adminform"].form
    assert form["risk_policy"].value() == '{\n  "cap_kyc3": 8000\n}'
    assert 'class="vLargeTextField json"' in str(form["risk_policy"])

    posted = {
        name: form[name].value() for name in form.fields if form[name].value() not in (None, False)
    }
    posted["risk_policy"] = '{\n  "cap_kyc3": 8000,\n  "base": "20"\n}'
    response = admin_client.post(url, {k: "on" if v is True else v for k, v in posted.items()})

    assert response.status_code == 302
    alice.merchant.refresh_from_db()
    assert alice.merchant.risk_policy == {"cap_kyc3": 8000, "base": "20"}


def our_pages() -> list[admin.options.BaseModelAdmin]:
    pages: list[admin.options.BaseModelAdmin] = []
    for model, model_admin in admin.site._registry.items():
        if type(model_admin).__module__.startswith("django."):
            continue
        pages.append(model_admin)
        pages.extend(inline(model, admin.site) for inline in model_admin.inlines)
    return pages


def test_no_page_shows_or_edits_a_json_field_on_one_line():
    request = RequestFactory().get("/admin/")
    request.user = User(is_staff=True, is_superuser=True)
    checked = []
    for page in our_pages():
        model = page.model
        shown = set(page.get_fields(request, model()))
        readonly = set(page.get_readonly_fields(request, model()))
        for field in model._meta.fields:
            if not isinstance(field, models.JSONField):
                continue
            if (model._meta.label, field.name) in ONE_LINE:
                continue
            assert field.name not in readonly, f"{model._meta.label}.{field.name}: use *_json"
            if field.name in shown:
                # A page staff may not edit shows its fields read-only: a JSON one on one line.
                assert page.has_change_permission(request), f"{model._meta.label}: *_json"
                assert isinstance(page.formfield_for_dbfield(field, request), IndentedJSONField)
            checked.append(f"{model._meta.label}.{field.name}")
    assert {"merchants.WebhookEvent.payload", "merchants.Merchant.risk_policy"} <= set(checked)
