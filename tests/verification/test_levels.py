"""The level verification grants: ``Client.effective_kyc_level``, kept across authentication."""

from decimal import Decimal

import pytest

from merchants.models import Client
from merchants.services import ClientData, client_authenticate
from merchants.verification.base import Verdict
from merchants.verification.services import (
    verification_link,
    verification_process_sync,
    verification_start,
    verification_verdict_apply,
)
from tests.factories import assert_error, platform_id, trade_url
from tests.trading.helpers import ok
from tests.verification.conftest import START

pytestmark = pytest.mark.django_db


def _client(actor, partner: int = 1, kyc_level: int = 0, kyc_hash: str | None = None) -> Client:
    client_authenticate(
        merchant=actor.merchant,
        platform_id=platform_id(partner),
        trade_url=trade_url(partner),
        client_id=None,
        client_data=ClientData(kyc_level=kyc_level, kyc_hash=kyc_hash),
    )
    return Client.objects.get(merchant=actor.merchant, platform_id=platform_id(partner))


@pytest.mark.parametrize(
    ("kyc_level", "verification_level", "effective"),
    [(0, 0, 0), (2, 0, 2), (3, 0, 3), (0, 3, 3), (1, 3, 3), (3, 3, 3)],
)
def test_effective_kyc_level_is_the_higher_of_both(kyc_level, verification_level, effective):
    client = Client(kyc_level=kyc_level, verification_level=verification_level)

    assert client.effective_kyc_level == effective


def test_an_accepted_dossier_raises_the_floor(alice):
    client = _client(alice, kyc_level=1)
    process = verification_start(client=client, email="ann@example.com").process
    assert Client.objects.get(pk=client.pk).effective_kyc_level == 1

    verification_verdict_apply(process=process, verdict=Verdict.ACCEPTED)

    client.refresh_from_db()
    assert (client.kyc_level, client.verification_level, client.effective_kyc_level) == (1, 3, 3)


def test_a_rejected_dossier_leaves_the_merchants_level(alice):
    client = _client(alice, kyc_level=2)
    process = verification_start(client=client, email=None).process

    verification_verdict_apply(process=process, verdict=Verdict.REJECTED)

    client.refresh_from_db()
    assert client.effective_kyc_level == 2


def test_a_pending_verdict_changes_nothing(alice):
    client = _client(alice)
    process = verification_start(client=client, email=None).process

    assert verification_process_sync(process=process).status == "PENDING"
    assert verification_verdict_apply(process=process, verdict=Verdict.PENDING).status == "PENDING"
    client.refresh_from_db()
    assert client.effective_kyc_level == 0


def test_applying_a_verdict_twice_applies_it_once(alice):
    client = _client(alice)
    process = verification_start(client=client, email="ann@example.com").process

    verification_verdict_apply(process=process, verdict=Verdict.ACCEPTED)
    again = verification_verdict_apply(process=process, verdict=Verdict.REJECTED)

    assert again.status == "ACCEPTED"
    client.refresh_from_db()
    assert client.verification_level == 3


def test_a_link_raises_the_floor(alice):
    first = _client(alice, 1, kyc_hash="ann")
    verification_verdict_apply(
        process=verification_start(client=first, email="ann@example.com").process,
        verdict=Verdict.ACCEPTED,
    )
    second = _client(alice, 2, kyc_level=1, kyc_hash="ann")

    linked = verification_link(client=second, email="ann@example.com")

    assert (linked.kyc_level, linked.effective_kyc_level) == (1, 3)


def test_reading_the_level_costs_no_query(alice, django_assert_num_queries):
    client = _client(alice)
    verification_verdict_apply(
        process=verification_start(client=client, email=None).process, verdict=Verdict.ACCEPTED
    )
    loaded = Client.objects.get(pk=client.pk)

    with django_assert_num_queries(0):
        assert loaded.effective_kyc_level == 3


def test_re_authentication_keeps_the_verified_level(api, verifier, alice):
    """clientData is replaced on every authentication; the verification's level and identity
    are not clientData and survive it, whatever kycLevel the merchant sends."""
    person = verifier.person(alice, 1, kycLevel=1, totalWager=50)
    verifier.verified(person, "ann@example.com")
    identity_id = person.client.identity_id

    for client_data in ({"kycLevel": 0}, {}, {"kycLevel": 2, "totalWager": 10}):
        token = verifier.person(alice, 1, **client_data).token
        client = person.client
        assert client.kyc_level == client_data.get("kycLevel", 0)
        assert client.verification_level == 3
        assert client.effective_kyc_level == 3
        assert client.identity_id == identity_id
        status = ok(api.get("/client/verification/status", headers={"Authorization": token}))
        assert status["verificationLevel"] == 3
        assert status["linkedIdentity"]["identityId"] == str(identity_id)
    assert person.client.total_wager == Decimal("10.00")
    response = api.post(START, {}, format="json", headers={"Authorization": token})
    assert_error(response, 409, 3006, "VERIFICATION_ALREADY_VERIFIED")


def test_an_identity_with_accounts_cannot_be_deleted_alone_but_goes_with_its_merchant(
    verifier, alice, bob
):
    from django.db.models import RestrictedError

    from merchants.models import Merchant
    from merchants.verification.models import VerificationProcess, VerifiedIdentity

    verifier.verified(verifier.person(alice, 1, kycHash="ann"), "ann@example.com")
    ok(verifier.link(verifier.person(alice, 2, kycHash="ann"), {"email": "ann@example.com"}))
    verifier.verified(verifier.person(bob, 1), "ann@example.com")

    with pytest.raises(RestrictedError):
        VerifiedIdentity.objects.filter(merchant=alice.merchant).delete()
    Merchant.objects.filter(pk=alice.merchant.pk).delete()

    assert list(VerifiedIdentity.objects.values_list("merchant", flat=True)) == [bob.merchant.pk]
    assert VerificationProcess.objects.get().merchant == bob.merchant
    assert Client.objects.get().verification_level == 3
