"""``GET /openapi.json`` is served prebuilt (issue 25, item 7): built once per process however
many fetch it at once, gzip-compressed for a client that takes it, with an ETag, and limited per
caller address. It used to be generated on every request: 16 parallel unauthenticated fetches held
a merchant's balance read for 2.8 s."""

import gzip
import json
import threading

import pytest
from django.db import connection
from django.test import RequestFactory
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularJSONAPIView
from rest_framework.test import APIClient

from config import openapi
from tests.factories import assert_error, make_actor
from tests.test_ratelimits import frozen_clock  # noqa: F401  (a fixture)

PATH = "/openapi.json"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A process that has built nothing yet; counts the builds."""
    monkeypatch.setattr(openapi, "_built", [])
    counted: list[int] = []
    real = SchemaGenerator.get_schema

    def counting(self, *args, **kwargs):
        counted.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting)
    return counted


@pytest.mark.django_db
def test_the_document_is_drf_spectaculars_own(api, builds):
    generated = SpectacularJSONAPIView.as_view()(RequestFactory().get(PATH))
    generated.render()

    served = api.get(PATH)

    assert served.status_code == 200
    assert served["Content-Type"] == "application/json"
    assert json.loads(served.content) == json.loads(generated.content)


@pytest.mark.django_db
def test_it_is_built_once_for_many_requests(api, builds):
    answers = {api.get(PATH).content for _ in range(5)}

    assert len(answers) == 1
    assert len(builds) == 1


@pytest.mark.django_db(transaction=True)
def test_parallel_first_fetches_wait_for_one_build(builds):
    barrier = threading.Barrier(16)
    answers: list[tuple[int, int]] = []

    def fetch() -> None:
        try:
            barrier.wait()
            response = APIClient().get(PATH, REMOTE_ADDR=f"10.0.0.{len(answers) % 200 + 1}")
            answers.append((response.status_code, len(response.content)))
        finally:
            connection.close()

    threads = [threading.Thread(target=fetch) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(builds) == 1
    assert len(answers) == 16
    assert {status for status, _ in answers} == {200}


@pytest.mark.django_db
def test_gzip_when_the_client_takes_it(api, builds):
    plain = api.get(PATH)
    compressed = api.get(PATH, HTTP_ACCEPT_ENCODING="br, gzip;q=0.9")

    assert "Content-Encoding" not in plain
    assert compressed["Content-Encoding"] == "gzip"
    assert compressed["Vary"] == "Accept-Encoding"
    assert gzip.decompress(compressed.content) == plain.content
    assert len(compressed.content) * 5 < len(plain.content)


@pytest.mark.django_db
def test_an_etag_the_client_holds_answers_304(api, builds):
    first = api.get(PATH)
    etag = first["ETag"]

    again = api.get(PATH, HTTP_IF_NONE_MATCH=f'"other", {etag}')
    stale = api.get(PATH, HTTP_IF_NONE_MATCH='"other"')

    assert etag.startswith('"')
    assert len(etag) == 34
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == etag
    assert stale.status_code == 200
    assert stale.content == first.content


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen_clock")
def test_each_address_has_its_own_limit(api, builds):
    merchant = make_actor(name="Alice")
    limit = openapi.RATE_LIMIT.rate(verified=False).limit
    for _ in range(limit):
        assert api.get(PATH, REMOTE_ADDR="192.0.2.7").status_code == 200

    refused = api.get(PATH, REMOTE_ADDR="192.0.2.7")
    error = assert_error(refused, 429, 1005, "RATE_LIMITED")
    assert int(refused["Retry-After"]) > 0
    assert error["message"]
    assert api.get(PATH, REMOTE_ADDR="192.0.2.8").status_code == 200
    balance = api.get("/v1/wallets/me/balance", headers=merchant.headers, REMOTE_ADDR="192.0.2.7")
    assert balance.status_code == 200
