"""The error catalog walked row by row (issue 25, "the classes, not only the instances"): every
key of ``core.errors.CATALOG`` (the contract's section 7, decisions section 6 and the service's
own rows, docs/errors.md) is provoked through the HTTP API, and the envelope answers exactly the
catalog's status, code and key, from an operation whose OpenAPI description lists that key. A row
no endpoint can meet in a test is an ``Exempt`` with its reason (and no operation may list it).
``test_the_walk_covers_the_catalog`` fails on a key added to the catalog until it gets a scenario
or an exemption here.

A scenario sets up the least that meets the row's condition (the suites' own helpers and
fixtures, the sandbox's helper endpoints) and returns the answer of one request; the other
suites test each refusal's details and that it leaves nothing behind.
"""

import inspect
import re
import threading
import types
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import pytest
import requests
from django.http import HttpResponse
from django.urls import Resolver404, resolve
from rest_framework.test import APIClient

from core.errors import CATALOG
from core.json import dumps
from core.services import service_settings_update
from merchants import ratelimits
from merchants.callers import callers_changed
from merchants.models import Client, Merchant, Scope
from merchants.services import api_secrets_revoke
from tests import test_openapi_docs as openapi_suite
from tests.crypto.conftest import USER, cashout_body, deposit_address
from tests.crypto.test_withdrawals import secure_cashout
from tests.deposits import conftest as deposit_suite
from tests.deposits.conftest import (
    ak_item,
    configure_owner,
    deposit,
    fleet,
    sell,
)
from tests.eager import _eager_celery  # noqa: F401 (autouse: tasks run eagerly)
from tests.factories import add_api_key, assert_error, auth_body, make_actor, trade_url
from tests.faults.database import backends_waiting_on_lock
from tests.faults.processes import free_port, wait_until
from tests.ledger.conftest import LIST as LEDGER
from tests.ledger.test_server_error import table_locked
from tests.test_idempotency import hold_key
from tests.test_openapi_docs import _error_keys, operations
from tests.trading.factories import CatalogItemFactory
from tests.verification.conftest import Verifier
from tests.verification.sumsub import conftest as sumsub_suite
from tests.verification.sumsub.conftest import notify
from tests.withdrawals import conftest as withdrawal_suite
from tests.withdrawals.conftest import (
    client_headers,
    funded,
    make_listing,
    make_rust_listing,
    ok_data,
    sandbox_event,
)
from tests.withdrawals.receiver import Receiver
from tests.withdrawals.test_cancels import client_withdraw, self_buy
from tests.withdrawals.test_locks import lock, outside, post
from trading.models import GameSettings, Trade, TradeItem

pytestmark = pytest.mark.django_db

# Fixtures of other suites (and those they ask for), named here so that a scenario can ask for
# them as a test does: ``owner`` is alice's client token for the deposit suites' owner, in a
# ``world`` of a bot and known inventories (tests/deposits/conftest.py); ``rust_item`` a
# second-game catalog item, whose listings have compound ids; ``sumsub`` a recorded Sumsub the
# service points at.
desk, hooks, owner, world, bot, ak, knife, cheap, door = (
    deposit_suite.desk,
    deposit_suite.hooks,
    deposit_suite.owner,
    deposit_suite.world,
    deposit_suite.bot,
    deposit_suite.ak,
    deposit_suite.knife,
    deposit_suite.cheap,
    deposit_suite.door,
)
rust_item = withdrawal_suite.rust_item
sumsub = sumsub_suite.sumsub
document = openapi_suite.document  # the OpenAPI document as /openapi.json serves it

AUTH = "/auth/authenticate-client"

Scenario = Callable[..., HttpResponse]


@dataclass(frozen=True)
class Exempt:
    """A row no endpoint can be made to answer in a test, and why."""

    reason: str


def _buyer(alice, hooks: Receiver):
    """alice with money and a callback receiver that approves, as a withdrawal needs."""
    return funded(alice, "1000.00", hooks.url)


def _listing():
    """A supplier listing at 10.00: 10.50 for alice, with her 5 % fee."""
    return make_listing(CatalogItemFactory(), "10.00")


def _buy(listing_id: str, price: str = "10.50"):
    """A self buy's body: one item, for the account behind partner 42."""
    return {"tradeUrl": trade_url(42), "items": [{"itemId": listing_id, "price": Decimal(price)}]}


# --- The contract's section 7 ----------------------------------------------------------------


def external_id_exists(desk, owner):
    ok_data(deposit(desk, owner, ak_item(0), externalId="order-1"))
    return deposit(desk, owner, ak_item(1), externalId="order-1")


def missing_items(desk, alice):
    return desk.post("/secure/buy", {"tradeUrl": trade_url(42), "items": []}, headers=alice.headers)


def inventory_fetch_failed(desk, owner):
    configure_owner(fault="error")
    return deposit(desk, owner, ak_item(0))


def too_many_active_trades(desk, owner):
    for n in range(5):
        ok_data(deposit(desk, owner, ak_item(n)))
    return deposit(desk, owner, ak_item(5))


def user_not_tradeable(desk, owner):
    configure_owner(economy_ban="banned")
    return deposit(desk, owner, ak_item(0))


def too_many_items(desk, alice):
    items = [{"itemId": str(uuid.uuid4()), "price": Decimal("1.05")} for _ in range(51)]
    body = {"tradeUrl": trade_url(42), "items": items}
    return desk.post("/secure/buy", body, headers=alice.headers)


def items_unavailable(desk, owner):
    return deposit(desk, owner, "730_1234567890")  # not in the owner's inventory


def items_not_accepted(desk, owner):
    return deposit(desk, owner, "730_4000000001", price="0")  # unknown to the catalog


def price_changed(desk, owner):
    return deposit(desk, owner, ak_item(0), price="36.01")  # the offer is 36.00


def merchant_balance_low(desk, alice, hooks):
    funded(alice, "10.49", hooks.url)  # a cent short of the listing's 10.50
    return desk.post("/secure/buy", _buy(_listing().id), headers=alice.headers)


def invalid_tradeurl(desk, alice, world):
    return sell(desk, alice, ak_item(0), tradeUrl="https://example.com/tradeoffer/new/?partner=1")


def listing_not_found(desk, alice, hooks):
    _buyer(alice, hooks)
    return desk.post("/secure/buy", _buy(str(uuid.uuid4())), headers=alice.headers)


def listing_price_invalid(desk, alice, hooks):
    _buyer(alice, hooks)
    body = _buy(_listing().id, price="10.505")
    return desk.post("/secure/buy", body, headers=alice.headers)


def invalid_listing_id(desk, alice, hooks):
    _buyer(alice, hooks)
    return desk.post("/secure/buy", _buy("not-a-listing-id"), headers=alice.headers)


def insufficient_item_amount(desk, owner):
    item = {"itemId": "252490_6000000002", "price": Decimal("1.80"), "amount": 2}  # holds 1
    return desk.post("/client/trading/deposit", {"game": "252490", "items": [item]}, headers=owner)


def exceeds_max_amount(desk, owner):
    item = {"itemId": "252490_6000000001", "price": Decimal("1.80"), "amount": 2}  # 1 a deposit
    return desk.post("/client/trading/deposit", {"game": "252490", "items": [item]}, headers=owner)


def deposit_in_progress(desk, owner):
    ok_data(deposit(desk, owner, ak_item(0)))
    return deposit(desk, owner, ak_item(0))


def withdraw_in_progress(desk, alice, hooks):
    """Another transaction holds the client's row, as a second withdrawal of the user does."""
    _buyer(alice, hooks)
    headers = client_headers(desk.api, alice)
    body = {"items": [{"itemId": _listing().id, "price": Decimal("10.50")}]}
    client = Client.objects.get(merchant=alice.merchant)
    with outside() as other:
        lock(other, Client, client.pk, "UPDATE")
        return desk.post("/client/trading/withdraw", body, headers=headers)


def trade_not_found(desk, alice, bob, world):
    """bob asks for alice's self sell."""
    trade = ok_data(sell(desk, alice, ak_item(0)))
    return desk.get(f"/secure/trades/{trade['id']}", headers=bob.headers)


def trade_not_cancellable(desk, alice, hooks):
    """The only item's purchase failed: the trade has ended, nothing is left to cancel."""
    _buyer(alice, hooks)
    trade = self_buy(desk, alice, [_listing()])
    ok_data(sandbox_event(desk, alice, trade["id"], "purchase_failed"))
    return desk.post(f"/secure/buy/{trade['id']}/items/line-1/cancel", headers=alice.headers)


def escrow_not_allowed(desk, owner):
    configure_owner(escrow_days=7)
    return deposit(desk, owner, ak_item(0))


def inventory_private(desk, owner):
    configure_owner(inventory_private=True)
    return deposit(desk, owner, ak_item(0))


def platform_unavailable(desk, owner):
    configure_owner(fault="unavailable")
    return deposit(desk, owner, ak_item(0))


def quick_buy_unsupported_game(desk, alice, hooks, rust_item):
    _buyer(alice, hooks)
    body = {"tradeUrl": trade_url(42), "itemId": rust_item.id, "maxPrice": Decimal(12), "amount": 1}
    return desk.post("/secure/buy/quick", body, headers=alice.headers)


def platform_rate_limited(desk, owner):
    configure_owner(fault="rate_limited")
    return deposit(desk, owner, ak_item(0))


def trade_cancel_unsupported(desk, alice, hooks, rust_item):
    """The second game has no cancel."""
    _buyer(alice, hooks)
    listing = make_rust_listing(rust_item, "10.00")
    trade = self_buy(desk, alice, [listing], game="252490")
    return desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice.headers)


def validation_failed(api, alice):
    return api.post(AUTH, {}, format="json", headers=alice.headers)


def rate_limited(api, monkeypatch):
    """An unverified merchant's eleventh ledger read in a minute (the clock is held mid-minute,
    so the window cannot roll over between the reads)."""
    window = (int(ratelimits.time.time()) // 60) * 60 + 30.0
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: window))
    small = make_actor(name="Small", is_verified=False)
    for _ in range(
        resolve("/v1/ledger/transactions").func.view_class.rate_limit.rate(verified=False).limit
    ):
        ok_data(api.get(LEDGER, headers=small.headers))
    return api.get(LEDGER, headers=small.headers)


def server_error(api, alice, monkeypatch):
    """Another session holds the ledger table: the history read runs into its time limit."""
    from ledger import selectors

    monkeypatch.setattr(selectors, "STATEMENT_TIMEOUT_MS", 200)
    with table_locked("ledger_funding"):
        return api.get(LEDGER, headers=alice.headers)


def system_maintenance(api, alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        service_settings_update(maintenance=True)
    return api.get("/secure/prices", headers=alice.headers)


def no_bots_available(api, alice, desk, owner):
    fleet(api, alice, "offline")
    return deposit(desk, owner, ak_item(0))


def fleet_degraded(api, alice, desk, owner):
    fleet(api, alice, "degraded")
    return deposit(desk, owner, ak_item(0))


def deposits_paused(desk, owner):
    GameSettings.objects.update_or_create(game=730, defaults={"deposits_paused": True})
    return deposit(desk, owner, ak_item(0))


def unauthorized(api):
    return api.post(AUTH, auth_body(), format="json")


def invalid_token(api):
    return api.get("/client/trades", headers={"Authorization": "Bearer not.a.token"})


def missing_bearer(api, alice):
    return api.get("/client/trades", headers=alice.headers)  # a merchant key, no client token


def forbidden(desk, alice, hooks):
    """A client's withdrawal is not the merchant's self trade to cancel."""
    _buyer(alice, hooks)
    trade = client_withdraw(desk, client_headers(desk.api, alice), [_listing()])
    return desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice.headers)


def merchant_api_key_required(api, alice):
    admin_key = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,), is_admin=True)
    return api.get(LEDGER, headers={"api-key": admin_key})


def account_disabled(api, alice):
    Merchant.objects.filter(pk=alice.merchant.pk).update(status=Merchant.Status.DISABLED)
    callers_changed()  # as the admin's save does
    return api.post(AUTH, auth_body(), format="json", headers=alice.headers)


def user_not_found(desk, owner):
    configure_owner(trade_url_state=7)  # the platform has nobody behind the trade URL
    return deposit(desk, owner, ak_item(0))


def invalid_amount(desk, alice, hooks):
    _buyer(alice, hooks)
    return desk.post("/secure/buy", _buy(_listing().id, price="0"), headers=alice.headers)


def instant_deposits_disabled(desk, owner):
    return deposit(desk, owner, ak_item(0), isInstant=True)  # alice has them off


def merchant_no_callback_url(desk, alice):
    return desk.post("/secure/buy", _buy(_listing().id), headers=alice.headers)


def missing_api_key(api, alice):
    return api.post(AUTH, auth_body(), format="json", headers={"Authorization": "Bearer x"})


def invalid_api_key(api, alice):
    return api.post(AUTH, auth_body(), format="json", headers={"api-key": alice.api_key + "x"})


def api_key_scope_denied(api, alice):
    ledger_only = add_api_key(alice.merchant, scopes=(Scope.LEDGER_READ,))
    return api.post(AUTH, auth_body(), format="json", headers={"api-key": ledger_only})


def api_key_ip_denied(api, alice):
    elsewhere = add_api_key(alice.merchant, ip_whitelist=("203.0.113.0/24",))
    return api.post(AUTH, auth_body(), format="json", headers={"api-key": elsewhere})


def insufficient_scope(api, alice):
    core_only = add_api_key(alice.merchant, scopes=(Scope.CORE_ACCESS,))
    return api.get(LEDGER, headers={"api-key": core_only})


def no_api_secret_configured(api, alice):
    api_secrets_revoke(merchant=alice.merchant)
    return api.post(AUTH, auth_body(), format="json", headers=alice.headers)


def item_not_found(desk, alice, bob, hooks):
    """bob cannot reach alice's self buy to cancel it."""
    _buyer(alice, hooks)
    trade = self_buy(desk, alice, [_listing()])
    return desk.post(f"/secure/buy/{trade['id']}/cancel", headers=bob.headers)


def onchain_disabled(desk, alice, settings):
    settings.CRYPTO_ENABLED = False
    params = {"chain": "ETH", "platformId": USER}
    return desk.get("/secure/crypto/deposit-address", headers=alice.headers, params=params)


def onchain_merchant_not_verified(desk):
    unverified = make_actor(name="Unverified", is_verified=False)
    params = {"chain": "ETH", "platformId": USER}
    return desk.get("/secure/crypto/deposit-address", headers=unverified.headers, params=params)


def onchain_address_capacity(desk, alice, settings):
    """One open Solana token account allowed, and the first one (still opening) holds it."""
    settings.CRYPTO_SOLANA_MAX_OPEN_ACCOUNTS = 1
    assert deposit_address(desk, alice, "SOL", "USDC")["status"] == "pending"
    params = {"chain": "SOL", "token": "USDT", "platformId": USER}
    return desk.get("/secure/crypto/deposit-address", headers=alice.headers, params=params)


# --- Decisions section 6 ---------------------------------------------------------------------


def item_overstocked(desk, owner):
    """The service takes at most one Karambit; the owner offers both of theirs."""
    return deposit(desk, owner, "730_2000000001", "730_2000000002", price="450.00")


def trade_cancel_too_soon(desk, alice, hooks):
    _buyer(alice, hooks)
    trade = self_buy(desk, alice, [_listing()])
    return desk.post(f"/secure/buy/{trade['id']}/items/line-1/cancel", headers=alice.headers)


def transaction_not_found(api, alice):
    return api.get(f"{LEDGER}/{uuid.uuid4()}", headers=alice.headers)


def invalid_transition(desk, alice, hooks):
    """A hold cannot end on an item still on its way (pending)."""
    _buyer(alice, hooks)
    trade = self_buy(desk, alice, [_listing()])
    return sandbox_event(desk, alice, trade["id"], "hold_ended")


def insufficient_balance(desk, alice):
    return secure_cashout(desk, alice)  # 25.00 out of an empty wallet


def onchain_withdraw_invalid_address(desk, alice):
    return secure_cashout(desk, alice, address=cashout_body()["address"].lower())  # no checksum


def onchain_withdraw_below_min(desk, alice):
    return secure_cashout(desk, alice, amountCents=500)  # too little left after the ETH fee


def verification_already_verified(api, alice):
    verifier = Verifier(api)
    person = verifier.person(alice)
    verifier.verified(person)
    return verifier.start(person)


def verification_in_progress(api, alice):
    verifier = Verifier(api)
    person = verifier.person(alice)
    verifier.started(person)
    return verifier.start(person)


def verification_not_available(api, alice):
    verifier = Verifier(api)
    person = verifier.person(alice)
    verifier.provider(alice, "offline")
    return verifier.start(person)


def webhook_event_not_found(api, alice):
    return api.post(f"/secure/webhooks/events/{uuid.uuid4()}/resend", headers=alice.headers)


def verification_link_denied(api, alice):
    """An email nobody verified proves nothing."""
    verifier = Verifier(api)
    return verifier.link(verifier.person(alice), {"email": "bea@example.com"})


def provider_signature_invalid(api, sumsub):
    """Signed with a secret other than the one Sumsub shares with the service."""
    body = b'{"type": "applicantReviewed"}'
    return notify(api, (body, sumsub.sign(body, secret="not-the-shared-secret")))


def provider_notification_replayed(api, alice, sumsub):
    """Sumsub's verdict on alice's client, taken once, then posted again as it was."""
    verifier = Verifier(api)
    applicant_id = verifier.started(verifier.person(alice), "ann@example.com")["dossierId"]
    sumsub.review(applicant_id, "GREEN")
    reviewed = sumsub.webhook(applicant_id)
    ok_data(notify(api, reviewed))
    return notify(api, reviewed)


# --- The service's own protocol rows (docs/errors.md) ----------------------------------------


def internal_error(api, alice, monkeypatch):
    """A bug, planted: the service behind the view raises what nobody handles."""

    def crash(**kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("merchants.apis.client_authenticate", crash)
    return api.post(AUTH, auth_body(), format="json", headers=alice.headers)


def not_found(api, alice):
    return api.get("/secure/no-such-route", headers=alice.headers)


def method_not_allowed(api, alice):
    return api.get(AUTH, headers=alice.headers)


def unsupported_media_type(api, alice):
    return api.post(AUTH, "clientPlatformId=1", content_type="text/plain", headers=alice.headers)


def service_unavailable(alice, settings):
    """Redis, really out of reach: the cache points at a port nobody listens on."""
    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": dead}}
    api = APIClient(raise_request_exception=False)
    return api.get("/v1/wallets/me/balance", headers=alice.headers)


def transaction_conflict(alice, hooks):
    """A deadlock the service does not retry (the cancel asks the marketplace inside its
    transaction): another session holds the trade's items, the cancel waits for them, then that
    session waits for the trade the cancel holds, and PostgreSQL aborts the cancel."""
    _buyer(alice, hooks)
    hooks.answer = lambda _: (503, b"")  # the approval stays unanswered: the trade in flight
    listing = _listing()
    trade_id = ok_data(post(alice, "/secure/buy", _buy(listing.id)))["id"]
    answers: list[HttpResponse] = []
    with outside() as other:
        lock(other, TradeItem, trade_id, "UPDATE", key="trade_id")
        cancel = threading.Thread(
            target=lambda: answers.append(post(alice, f"/secure/buy/{trade_id}/cancel"))
        )
        cancel.start()
        wait_until(lambda: backends_waiting_on_lock("SELECT"), "the cancel to wait for the lock")
        lock(other, Trade, trade_id, "UPDATE")
    cancel.join(30)
    (answer,) = answers
    return answer


# --- Idempotency-Key (docs/decisions.md) -----------------------------------------------------


def idempotency_key_in_use(api, alice):
    """The same request under the key is still running (claimed, not yet answered)."""
    body = auth_body()
    running = requests.Request("POST", f"http://testserver{AUTH}", data=dumps(body))
    hold_key(alice, "order-7", running)
    headers = {**alice.headers, "Idempotency-Key": "order-7"}
    return api.post(AUTH, body, format="json", headers=headers)


def idempotency_key_reused(api, alice):
    headers = {**alice.headers, "Idempotency-Key": "order-7"}
    ok_data(api.post(AUTH, auth_body(1), format="json", headers=headers))
    return api.post(AUTH, auth_body(2), format="json", headers=headers)


WALK: dict[str, Scenario | Exempt] = {
    "EXTERNAL_ID_EXISTS": external_id_exists,
    "MISSING_ITEMS": missing_items,
    "INVENTORY_FETCH_FAILED": inventory_fetch_failed,
    "NO_OFFER_FOUND": Exempt(
        "no endpoint answers it: docs/decisions.md answers the contract's 'no valid offer' "
        "conditions with other rows (a deposit item without an offer: 10 ITEMS_NOT_ACCEPTED; "
        "nothing under a quick withdrawal's ceiling: 17 INSUFFICIENT_ITEM_AMOUNT)"
    ),
    "TOO_MANY_ACTIVE_TRADES": too_many_active_trades,
    "USER_NOT_TRADEABLE": user_not_tradeable,
    "TOO_MANY_ITEMS": too_many_items,
    "ITEMS_UNAVAILABLE": items_unavailable,
    "ITEMS_NOT_ACCEPTED": items_not_accepted,
    "PRICE_CHANGED": price_changed,
    "MERCHANT_BALANCE_LOW": merchant_balance_low,
    "INVALID_TRADEURL": invalid_tradeurl,
    "LISTING_NOT_FOUND": listing_not_found,
    "LISTING_PRICE_INVALID": listing_price_invalid,
    "INVALID_LISTING_ID": invalid_listing_id,
    "INSUFFICIENT_ITEM_AMOUNT": insufficient_item_amount,
    "EXCEEDS_MAX_AMOUNT": exceeds_max_amount,
    "DEPOSIT_IN_PROGRESS": deposit_in_progress,
    "WITHDRAW_IN_PROGRESS": withdraw_in_progress,
    "TRADE_NOT_FOUND": trade_not_found,
    "TRADE_NOT_CANCELLABLE": trade_not_cancellable,
    "ESCROW_NOT_ALLOWED": escrow_not_allowed,
    "INVENTORY_PRIVATE": inventory_private,
    "PLATFORM_UNAVAILABLE": platform_unavailable,
    "QUICK_BUY_UNSUPPORTED_GAME": quick_buy_unsupported_game,
    "PLATFORM_RATE_LIMITED": platform_rate_limited,
    "TRADE_CANCEL_UNSUPPORTED": trade_cancel_unsupported,
    "VALIDATION_FAILED": validation_failed,
    "RATE_LIMITED": rate_limited,
    "SERVER_ERROR": server_error,
    "SYSTEM_MAINTENANCE": system_maintenance,
    "NO_BOTS_AVAILABLE": no_bots_available,
    "FLEET_DEGRADED": fleet_degraded,
    "DEPOSITS_PAUSED": deposits_paused,
    "UNAUTHORIZED": unauthorized,
    "INVALID_TOKEN": invalid_token,
    "MISSING_BEARER": missing_bearer,
    "FORBIDDEN": forbidden,
    "MERCHANT_API_KEY_REQUIRED": merchant_api_key_required,
    "ACCOUNT_DISABLED": account_disabled,
    "USER_NOT_FOUND": user_not_found,
    "INVALID_AMOUNT": invalid_amount,
    "INSTANT_DEPOSITS_DISABLED": instant_deposits_disabled,
    "MERCHANT_NO_CALLBACK_URL": merchant_no_callback_url,
    "MISSING_API_KEY": missing_api_key,
    "INVALID_API_KEY": invalid_api_key,
    "API_KEY_SCOPE_DENIED": api_key_scope_denied,
    "API_KEY_IP_DENIED": api_key_ip_denied,
    "INSUFFICIENT_SCOPE": insufficient_scope,
    "NO_API_SECRET_CONFIGURED": no_api_secret_configured,
    "ITEM_NOT_FOUND": item_not_found,
    "ONCHAIN_DISABLED": onchain_disabled,
    "ONCHAIN_MERCHANT_NOT_VERIFIED": onchain_merchant_not_verified,
    "ONCHAIN_ADDRESS_CAPACITY": onchain_address_capacity,
    "ITEM_OVERSTOCKED": item_overstocked,
    "TRADE_CANCEL_TOO_SOON": trade_cancel_too_soon,
    "TRANSACTION_NOT_FOUND": transaction_not_found,
    "INVALID_TRANSITION": invalid_transition,
    "INSUFFICIENT_BALANCE": insufficient_balance,
    "ONCHAIN_WITHDRAW_INVALID_ADDRESS": onchain_withdraw_invalid_address,
    "ONCHAIN_WITHDRAW_BELOW_MIN": onchain_withdraw_below_min,
    "VERIFICATION_ALREADY_VERIFIED": verification_already_verified,
    "VERIFICATION_IN_PROGRESS": verification_in_progress,
    "VERIFICATION_NOT_AVAILABLE": verification_not_available,
    "CALLBACK_URL_TEST_FAILED": Exempt(
        "no API endpoint sets a callback URL: `manage.py set_callback_url` and `create_merchant` "
        "do (docs/decisions.md, 'Callback URL'); tests/webhooks/test_regular_events.py and "
        "tests/test_commands.py provoke it there"
    ),
    "WEBHOOK_EVENT_NOT_FOUND": webhook_event_not_found,
    "VERIFICATION_LINK_DENIED": verification_link_denied,
    "PROVIDER_SIGNATURE_INVALID": provider_signature_invalid,
    "PROVIDER_NOTIFICATION_REPLAYED": provider_notification_replayed,
    "INTERNAL_ERROR": internal_error,
    "NOT_FOUND": not_found,
    "METHOD_NOT_ALLOWED": method_not_allowed,
    "UNSUPPORTED_MEDIA_TYPE": unsupported_media_type,
    "SERVICE_UNAVAILABLE": service_unavailable,
    "TRANSACTION_CONFLICT": transaction_conflict,
    "IDEMPOTENCY_KEY_IN_USE": idempotency_key_in_use,
    "IDEMPOTENCY_KEY_REUSED": idempotency_key_reused,
}

# Scenarios whose rows another database session must see (it holds a lock on them), so their
# setup is committed, not rolled back with the test's transaction.
COMMITTED = {"WITHDRAW_IN_PROGRESS", "SERVER_ERROR", "TRANSACTION_CONFLICT"}

# Rows whose request reaches no operation of the OpenAPI document: no route, a method the route
# does not take, and the identity provider's endpoint (only Sumsub calls it: left out on purpose).
UNDOCUMENTED = {
    "NOT_FOUND",
    "METHOD_NOT_ALLOWED",
    "PROVIDER_SIGNATURE_INVALID",
    "PROVIDER_NOTIFICATION_REPLAYED",
}


def _rows() -> list:
    return [
        pytest.param(
            key,
            id=key,
            marks=[pytest.mark.django_db(transaction=True)] if key in COMMITTED else [],
        )
        for key in WALK
    ]


def _operation(document: dict, response: HttpResponse) -> dict | None:
    """The operation of the OpenAPI document that the response's request reached, if any."""
    request = response.wsgi_request
    try:
        route = resolve(request.path_info).route
    except Resolver404:
        return None
    template = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
    operation: dict | None = document["paths"].get(template, {}).get(request.method.lower())
    return operation


def test_the_walk_covers_the_catalog():
    assert set(CATALOG) - set(WALK) == set(), "catalog rows without a scenario or an exemption"
    assert set(WALK) - set(CATALOG) == set(), "scenarios for keys the catalog does not have"
    provoked = {key for key, row in WALK.items() if not isinstance(row, Exempt)}
    assert (COMMITTED | UNDOCUMENTED) - provoked == set()


@pytest.mark.parametrize("key", _rows())
def test_the_catalog_row_is_answered(key: str, request: pytest.FixtureRequest, document):
    """The row's answer, from an operation whose OpenAPI description lists it. An exempt row is
    listed by no operation: one that lists it can be made to answer it, and needs a scenario."""
    row = WALK[key]
    if isinstance(row, Exempt):
        assert [name for name, op in operations(document) if key in _error_keys(op)] == []
        pytest.skip(row.reason)
    fixtures = {name: request.getfixturevalue(name) for name in inspect.signature(row).parameters}
    spec = CATALOG[key]

    response = row(**fixtures)

    assert_error(response, spec.status, spec.code, spec.key)
    operation = _operation(document, response)
    if key in UNDOCUMENTED:
        assert operation is None
    else:
        assert operation is not None, response.wsgi_request.path_info
        assert key in _error_keys(operation), "the operation's description does not list it"
