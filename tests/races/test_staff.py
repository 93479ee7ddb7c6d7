"""Staff moving money through the admin (a logged-in superuser, the real login and CSRF), 30
forms posted at once: every credit lands once; debits and transfers racing for a merchant's
last dollar take exactly what there is (the rest get the form's refusal); transfers both ways
between two merchants do not deadlock. Each move has its audit entry."""

import re
from decimal import Decimal

import pytest
import requests
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from ledger.models import Funding
from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.races.conftest import TIMEOUT, Call, N, burst, money, shop, wallet_clean
from wallet.models import Transfer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ADJUST = "/admin/ledger/funding/adjust/"
TRANSFER = "/admin/ledger/funding/transfer/"
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Staff:
    """A staff browser session: logged in through the admin's login form."""

    def __init__(self, web: str) -> None:
        User.objects.create_superuser("staff", "staff@example.com", "correct horse battery")
        self.web = web
        self.session = requests.Session()
        login = f"{web}/admin/login/"
        token = self._token(login)
        credentials = {"username": "staff", "password": "correct horse battery"}
        response = self.session.post(
            login,
            data=credentials | {"csrfmiddlewaretoken": token, "next": "/admin/"},
            allow_redirects=False,
            timeout=TIMEOUT,
        )
        assert response.status_code == 302, response.text

    def _token(self, url: str) -> str:
        page = self.session.get(url, timeout=TIMEOUT)
        assert page.status_code == 200, page.text
        found = TOKEN.search(page.text)
        assert found is not None
        return found.group(1)

    def posts(self, path: str, forms: list[dict[str, str]]) -> list[int]:
        """The forms posted at once (each in a session of its own with this login); the
        statuses: 302 done, 200 the form again with its refusal."""
        url = f"{self.web}{path}"
        token = self._token(url)
        cookies = self.session.cookies.get_dict()

        def call(form: dict[str, str]) -> Call:
            def send(session: requests.Session) -> requests.Response:
                session.cookies.update(cookies)
                data = form | {"csrfmiddlewaretoken": token}
                return session.post(url, data=data, allow_redirects=False, timeout=TIMEOUT)

            return send

        responses = burst([call(form) for form in forms])
        for response in responses:
            assert response.status_code in (200, 302), response.text[:2000]
            if response.status_code == 200:
                assert "cannot take a spendable balance below zero" in response.text
        return [response.status_code for response in responses]


def adjust(actor: Actor, direction: str) -> dict[str, str]:
    return {
        "merchant": str(actor.merchant.pk),
        "direction": direction,
        "amount": "5.00",
        "reason": "race",
    }


def transfer(source: Actor, target: Actor) -> dict[str, str]:
    return {
        "source": str(source.merchant.pk),
        "target": str(target.merchant.pk),
        "amount": "5.00",
        "reason": "race",
    }


def test_thirty_credits_each_land_once(own_web: str, callback: CallbackServer):
    actor = shop(callback.url, balance="0")

    statuses = Staff(own_web).posts(ADJUST, [adjust(actor, "credit")] * N)

    assert statuses == [302] * N
    assert money(actor)["available"] == Decimal("5.00") * N
    assert Transfer.objects.filter(kind="ADMIN_CREDIT").count() == N
    assert LogEntry.objects.filter(change_message__startswith="ADMIN_CREDIT").count() == N
    wallet_clean()


def test_debits_racing_for_the_last_dollar(own_web: str, callback: CallbackServer):
    actor = shop(callback.url, balance="50.00")

    statuses = Staff(own_web).posts(ADJUST, [adjust(actor, "debit")] * N)

    assert statuses.count(302) == 10
    assert money(actor)["available"] == Decimal("0.00")
    assert Transfer.objects.filter(kind="ADMIN_DEBIT").count() == 10
    wallet_clean()


def test_transfers_racing_for_the_last_dollar(own_web: str, callback: CallbackServer):
    alice = shop(callback.url, balance="50.00", name="Alice")
    bob = shop(callback.url, balance="0", name="Bob")

    statuses = Staff(own_web).posts(TRANSFER, [transfer(alice, bob)] * N)

    assert statuses.count(302) == 10
    assert money(alice)["available"] == Decimal("0.00")
    assert money(bob)["available"] == Decimal("50.00")
    assert Funding.objects.filter(type=Funding.Type.INTERNAL_TRANSFER).count() == 2 * 10
    wallet_clean()


def test_transfers_both_ways_at_once(own_web: str, callback: CallbackServer):
    alice = shop(callback.url, balance="100.00", name="Alice")
    bob = shop(callback.url, balance="100.00", name="Bob")
    forms = [transfer(alice, bob) if n % 2 else transfer(bob, alice) for n in range(N)]

    statuses = Staff(own_web).posts(TRANSFER, forms)

    assert statuses == [302] * N
    assert money(alice)["available"] == Decimal("100.00")
    assert money(bob)["available"] == Decimal("100.00")
    assert Transfer.objects.filter(kind="INTERNAL_TRANSFER").count() == N
    wallet_clean()
