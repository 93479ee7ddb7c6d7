"""GET /client/market/suggestions (decisions section 6)."""

import pytest

from tests.factories import assert_error
from tests.trading.factories import RUST, CatalogItemFactory
from tests.trading.helpers import caller, ok

pytestmark = pytest.mark.django_db

SUGGESTIONS = "/market/suggestions"


@pytest.fixture
def client_alice(api, alice):
    return caller(api, alice, "client")


def suggest(who, **params):
    return ok(who.get(SUGGESTIONS, params))


def refused(who, **params):
    error = assert_error(who.get(SUGGESTIONS, params), 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == {next(iter(params), "q")} if params else {"q"}
    return error


@pytest.fixture
def redlines(db):
    for name, popularity in (
        ("M4A1-S | Redline (Minimal Wear)", 7),
        ("AK-47 | Redline (Field-Tested)", 100),
        ("Redline Keychain", 5),
        ("Redline", 1),
        ("Redline Sticker", 50),
        ("AWP | Asiimov (Field-Tested)", 1000),
    ):
        CatalogItemFactory(market_hash_name=name, popularity=popularity)
    CatalogItemFactory(game=RUST, market_hash_name="Redline Hoodie", item_type="Clothing")


def test_best_matches_first(client_alice, redlines):
    found = [s["marketHashName"] for s in suggest(client_alice, q="rEdLiNe")]
    assert found == [
        "Redline",  # exact
        "Redline Sticker",  # prefix, more popular
        "Redline Keychain",  # prefix
        "AK-47 | Redline (Field-Tested)",  # inside, more popular
        "M4A1-S | Redline (Minimal Wear)",
    ]


def test_fields(client_alice, db):
    item = CatalogItemFactory(
        id="730-001234",
        market_hash_name="Desert Eagle | Blaze (Factory New)",
        item_type="Pistol",
        rarity="Restricted",
        rarity_color="8847ff",
    )
    assert suggest(client_alice, q="blaze") == [
        {
            "id": "730-001234",
            "marketHashName": "Desert Eagle | Blaze (Factory New)",
            "iconUrl": item.icon_url,
            "rarity": "Restricted",
            "rarityColor": "8847ff",
            "itemType": "Pistol",
        }
    ]


def test_at_most_20(client_alice, db):
    for n in range(25):
        CatalogItemFactory(market_hash_name=f"Sticker | Team {n:02d}", popularity=n)
    found = suggest(client_alice, q="sticker")
    assert len(found) == 20
    assert found[0]["marketHashName"] == "Sticker | Team 24"  # all prefixes: most popular first


def test_per_game(client_alice, redlines):
    assert [s["marketHashName"] for s in suggest(client_alice, q="redline", game="252490")] == [
        "Redline Hoodie"
    ]
    assert "Redline Hoodie" not in [s["marketHashName"] for s in suggest(client_alice, q="hoodie")]
    assert suggest(client_alice, q="nothing like it") == []


def test_q_is_required_and_1_to_100_characters(client_alice, redlines):
    refused(client_alice)
    refused(client_alice, q="")
    refused(client_alice, q="r" * 101)
    assert suggest(client_alice, q="r" * 100) == []
    assert len(suggest(client_alice, q="R")) == 5  # every name with an r but the AWP


def test_unknown_game_is_refused(client_alice, redlines):
    error = assert_error(
        client_alice.get(SUGGESTIONS, {"q": "redline", "game": "440"}),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert set(error["fields"]) == {"game"}


def test_merchant_key_is_not_a_client_token(api, alice, redlines):
    response = api.get("/client/market/suggestions", {"q": "redline"}, headers=alice.headers)
    assert_error(response, 401, 1108, "MISSING_BEARER")
