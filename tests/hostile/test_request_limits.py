"""Request-level refusals (core.api.middleware.RequestLimitsMiddleware): a NUL in the path or
query, a query that is not UTF-8, a URL or headers over the application's limits and a declared
body over DATA_UPLOAD_MAX_MEMORY_SIZE are VALIDATION_FAILED on every route, before routing and
authentication, whatever web server runs the application."""

import pytest

from core.api.middleware import MAX_HEADERS_BYTES, MAX_URL_LENGTH
from tests.factories import assert_error
from tests.trading.helpers import client_token
from trading.models import Trade

pytestmark = pytest.mark.django_db

NOT_TEXT = "Must be UTF-8 text without NUL characters."

# Every route with a path parameter; the issue found 500s on the first ten.
NUL_PATHS = [
    ("GET", "/secure/trades/a%00b"),
    ("POST", "/secure/buy/a%00b/cancel"),
    ("POST", "/secure/buy/a%00b/items/x/cancel"),
    ("POST", "/secure/buy/x/items/a%00b/cancel"),
    ("POST", "/sandbox/trades/a%00b/events"),
    ("POST", "/sandbox/verification/a%00b"),
    ("POST", "/sandbox/crypto/transfers/a%00b/confirmations"),
    ("POST", "/sandbox/crypto/transfers/a%00b/reorg"),
    ("POST", "/sandbox/crypto/chains/a%00b"),
    ("POST", "/secure/webhooks/events/a%00b/resend"),
    ("GET", "/v1/ledger/transactions/a%00b"),
    ("GET", "/client/trades/a%00b"),
    ("POST", "/client/trading/withdraw/a%00b/cancel"),
    ("POST", "/client/trading/withdraw/x/items/a%00b/cancel"),
    ("GET", "/admin/trading/trade/a%00b/change/"),
]


def call(api, method: str, path: str, headers: dict[str, str], **extra):
    return api.generic(method, path, b"{}", "application/json", headers=headers, **extra)


@pytest.fixture
def headers(api, alice) -> dict[str, str]:
    """The merchant's key and a client token of it: every route finds its credentials."""
    return {**alice.headers, "Authorization": f"Bearer {client_token(api, alice)}"}


@pytest.mark.parametrize(("method", "path"), NUL_PATHS)
def test_a_nul_in_the_path_is_refused_on_every_route(api, headers, method, path):
    response = call(api, method, path, headers)

    assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"] == {"path": NOT_TEXT}
    assert not Trade.objects.exists()


def test_a_nul_is_refused_without_credentials_too(api):
    response = call(api, "GET", "/secure/trades/a%00b", {})

    assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"] == {"path": NOT_TEXT}


def test_a_path_that_is_not_utf8_names_nothing(api, headers):
    response = call(api, "GET", "/secure/trades/%FF%FE", headers)

    assert_error(response, 404, 21, "TRADE_NOT_FOUND")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("cursor=a%00b", "cursor"),
        ("limit=5&type=a%00", "type"),
        ("cursor=%FF%FE", "cursor"),
        ("cursor=%ED%A0%80", "cursor"),  # an encoded surrogate
        ("pro%00be=1", "query"),
        ("%FF=1", "query"),
        ("ok=1&ok=%C3", "ok"),
    ],
)
def test_a_query_with_nul_or_not_utf8_is_refused(api, headers, query, field):
    response = call(api, "GET", f"/secure/trades?{query}", headers)

    assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"] == {field: NOT_TEXT}


def test_text_queries_pass(api, headers):
    response = call(api, "GET", "/secure/trades?type=deposit&x=caf%C3%A9+%E2%82%AC&flag", headers)

    assert response.status_code == 200, response.content


def test_a_url_over_the_limit_is_refused(api, headers):
    path, query = "/secure/trades", "type=deposit&x="  # unknown query parameters are ignored
    at_limit = f"{path}?{query}{'a' * (MAX_URL_LENGTH - len(path) - len(query))}"

    assert call(api, "GET", at_limit, headers).status_code == 200
    response = call(api, "GET", at_limit + "a", headers)
    assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"] == {
        "url": "The URL is longer than 4096 characters."
    }


def test_the_limit_counts_characters_not_their_encoding(api, headers):
    """The document bounds parameters in characters: 2000 of "é" are 12000 when encoded."""
    path, query = "/secure/trades", "type=deposit&x="
    text = "%C3%A9" * (MAX_URL_LENGTH - len(path) - len(query))

    assert call(api, "GET", f"{path}?{query}{text}", headers).status_code == 200
    response = call(api, "GET", f"{path}?{query}{text}%C3%A9", headers)
    assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"].keys() == {"url"}


def test_headers_over_the_limit_are_refused(api, headers):
    padding = {f"X-Pad-{n}": "a" * 4000 for n in range(MAX_HEADERS_BYTES // 4000 + 1)}

    response = call(api, "GET", "/secure/trades", {**headers, **padding})

    assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"] == {
        "headers": "The headers are larger than 16384 bytes."
    }


def test_a_declared_body_over_the_limit_is_refused_on_a_route_that_never_reads_it(
    api, alice, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    body = b'{"a": "' + b"x" * 100 + b'"}'

    for method, path in (
        ("GET", "/v1/wallets/me/balance"),
        ("POST", "/sandbox/demo-callback"),
        ("GET", "/health"),
    ):
        response = api.generic(method, path, body, headers=alice.headers)
        assert assert_error(response, 400, 1001, "VALIDATION_FAILED")["fields"] == {
            "body": "The body is too large."
        }
