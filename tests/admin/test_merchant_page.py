"""The merchant's page answers a support call at a glance: its balances, its API keys (never a
secret), its latest trades with links, and how its webhooks are doing; another merchant's data
never shows."""

import html
import re
from datetime import timedelta

import pytest
from pytest_django.asserts import assertContains, assertNotContains

from core import clock
from merchants.models import ApiKey, Merchant
from merchants.services import api_key_revoke
from merchants.webhooks.models import WebhookEvent
from tests.factories import add_api_key
from tests.withdrawals.test_history import stored_trade
from trading.admin.panels import RECENT_TRADES

pytestmark = pytest.mark.django_db


def page_of(admin_client, merchant: Merchant):
    response = admin_client.get(f"/admin/merchants/merchant/{merchant.pk}/change/")
    assert response.status_code == 200
    return response


def panel(response, slug: str) -> str:
    """The HTML of one section of the merchant's page."""
    found = re.search(
        rf'<fieldset class="module merchant-panel" id="panel-{slug}">(.*?)</fieldset>',
        response.content.decode(),
        re.DOTALL,
    )
    assert found is not None, slug
    return found.group(1)


def test_balances_show_each_account_of_the_merchant(admin_client, alice, trades):
    # 100.00 credited, 10.50 locked by the buy in flight; the deposit is not accepted yet.
    response = page_of(admin_client, alice.merchant)
    shown = panel(response, "balances")

    for kind, label, amount in [
        ("available", "Available (spendable)", "89.50"),
        ("locked", "Locked (withdrawals and cashouts in flight)", "10.50"),
        ("escrow", "Escrow (deposit value in its hold)", "0.00"),
        ("collateral", "Collateral (merchant part of instant deposits)", "0.00"),
    ]:
        row = f'<tr class="balance-{kind}"><td>{label}</td><td class="amount">{amount}</td></tr>'
        assertContains(response, row, html=True)
    assert f"merchant__id__exact={alice.merchant.pk}" in shown


def test_keys_show_prefix_status_and_dates_never_a_secret(admin_client, alice, bob):
    revoked_raw = add_api_key(alice.merchant)
    revoked = ApiKey.objects.get(prefix=revoked_raw[: ApiKey.PREFIX_LENGTH])
    api_key_revoke(api_key=revoked)
    live = ApiKey.objects.get(prefix=alice.api_key[: ApiKey.PREFIX_LENGTH])

    response = page_of(admin_client, alice.merchant)
    shown = panel(response, "api-keys")

    statuses = dict(re.findall(r"<code>(\w+)</code>.*?class=\"key-status\">(\w+)", shown, re.S))
    assert statuses == {revoked.prefix: "revoked", live.prefix: "active"}
    # The newest key first, each linked to its own page.
    assert shown.index(revoked.prefix) < shown.index(live.prefix)
    assert f"/admin/merchants/apikey/{revoked.pk}/change/" in shown
    for secret in (alice.api_key, revoked_raw, live.key_hash, revoked.key_hash):
        assertNotContains(response, secret)
    assertNotContains(response, alice.merchant.webhook_secret)
    bobs = ApiKey.objects.get(merchant=bob.merchant).prefix
    assert bobs not in shown


def test_the_latest_trades_are_linked_newest_first(admin_client, alice, trades):
    shown = panel(page_of(admin_client, alice.merchant), "trades")

    links = re.findall(r'href="/admin/trading/trade/([0-9a-f-]+)/change/"', shown)
    assert links == [str(trades.alice_buy.pk), str(trades.alice_deposit.pk)]
    assert str(trades.bob_sell.pk) not in shown
    assert f"/admin/trading/trade/?merchant__id__exact={alice.merchant.pk}" in shown


def test_only_the_latest_ten_trades_are_listed(admin_client, alice):
    start = clock.now()
    made = [stored_trade(alice, start + timedelta(minutes=n)) for n in range(RECENT_TRADES + 2)]

    shown = panel(page_of(admin_client, alice.merchant), "trades")

    links = re.findall(r'href="/admin/trading/trade/([0-9a-f-]+)/change/"', shown)
    assert links == [str(t.pk) for t in reversed(made)][:RECENT_TRADES]


def test_webhook_health_of_a_merchant_whose_events_arrive(admin_client, alice, trades):
    events = WebhookEvent.objects.filter(merchant=alice.merchant)
    assert events.exists()
    assert not events.exclude(status="delivered").exists()

    shown = panel(page_of(admin_client, alice.merchant), "webhooks")

    assert re.search(r'class="webhook-pending"><a href="[^"]+">0</a>', shown)
    assert re.search(r'class="webhook-failed"><a href="[^"]+">0</a>', shown)
    assert 'class="webhook-delivered">never' not in shown
    assert 'class="webhook-failure">none' in shown


def test_webhook_health_of_a_merchant_whose_url_is_gone(admin_client, bob_gone, bob, trades):
    shown = panel(page_of(admin_client, bob.merchant), "webhooks")

    failed = WebhookEvent.objects.filter(merchant=bob.merchant, status="failed").count()
    pending = WebhookEvent.objects.filter(merchant=bob.merchant, status="pending").count()
    assert failed >= 1
    assert re.search(rf'class="webhook-failed"><a href="[^"]+">{failed}</a>', shown)
    assert re.search(rf'class="webhook-pending"><a href="[^"]+">{pending}</a>', shown)
    assert "disabled since" in shown
    # The 410 ended the first event; the events after it wait for a URL that works.
    assert pending >= 1
    assert "no active callback URL" in shown
    assert 'class="webhook-delivered">never' in shown
    assert f"merchant__id__exact={bob.merchant.pk}&amp;status__exact=failed" in shown


@pytest.fixture
def bob_gone(bob_hooks):
    """Bob's callback URL answers 410 Gone: the first event fails and the URL is disabled."""
    bob_hooks.answer = lambda _: (410, b"")
    return bob_hooks


def test_a_new_merchant_page_has_no_sections(admin_client):
    response = admin_client.get("/admin/merchants/merchant/add/")

    assert response.status_code == 200
    assertNotContains(response, "merchant-panel")


def test_the_risk_policy_shows_each_number_in_force_and_what_is_ignored(admin_client, alice):
    Merchant.objects.filter(pk=alice.merchant.pk).update(
        risk_policy={"cap_kyc3": 8000, "base": "20", "cap_kyc_3": 9000, "<b>typo</b>": 1}
    )

    response = page_of(admin_client, alice.merchant)
    shown = panel(response, "risk-policy")

    for name, value, source in [
        ("cap_kyc3", "8000", "this merchant"),
        ("base", "20", "this merchant"),
        ("cap_kyc0", "50", "default"),
        ("wager_rate", "0.05", "default"),
    ]:
        row = (
            f'<tr class="risk-{name}"><td><code>{name}</code></td>'
            f'<td class="amount">{value}</td><td>{source}</td></tr>'
        )
        assertContains(response, row, html=True)
    ignored = re.search(r'class="errornote risk-ignored">(.*?)</p>', shown, re.S).group(1)
    assert "<code>cap_kyc_3</code>" in ignored
    assert "&lt;b&gt;typo&lt;/b&gt;" in ignored
    assert "<b>typo</b>" not in response.content.decode()
    assert '<pre class="json">{\n  &quot;base&quot;: &quot;20&quot;' in shown


def test_a_risk_number_that_is_not_a_number_is_flagged(admin_client, alice):
    Merchant.objects.filter(pk=alice.merchant.pk).update(risk_policy={"base": "lots"})

    shown = panel(page_of(admin_client, alice.merchant), "risk-policy")

    assert "not a number: lots" in shown


def test_every_link_of_the_sections_opens_a_page_of_this_merchant_only(
    admin_client, alice, bob, trades
):
    page = page_of(admin_client, alice.merchant).content.decode()
    sections = "".join(page.split('id="panel-')[1:])
    links = sorted({html.unescape(href) for href in re.findall(r'href="(/admin/[^"]+)"', sections)})
    lists = [link for link in links if "merchant__id__exact" in link]
    assert len(lists) == 5  # keys, accounts, trades, pending and failed webhook events

    for link in links:
        response = admin_client.get(link)
        assert response.status_code == 200, link  # a refused filter redirects to ?e=1
    for link in lists:
        rows = admin_client.get(link).context["cl"].result_list
        assert {row.merchant_id for row in rows} <= {alice.merchant.pk}, link
    add_key = admin_client.get(f"/admin/merchants/apikey/add/?merchant={alice.merchant.pk}")
    assert add_key.context["adminform"].form.initial["merchant"] == str(alice.merchant.pk)
