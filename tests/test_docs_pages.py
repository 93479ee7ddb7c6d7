"""What a newcomer meets in the docs: ``/docs`` without its slash, the success answers'
descriptions, the Idempotency-Key of every POST and /health's maintenance mode, as the OpenAPI
document tells them."""

import pytest
from rest_framework.test import APIClient

from core.errors import CATALOG

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def document(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        answer = APIClient().get("/openapi.json")
    assert answer.status_code == 200
    return answer.json()


def operations(document: dict):
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {path}", method, operation


def test_docs_without_the_slash_is_sent_to_the_docs(api):
    answer = api.get("/docs")

    assert answer.status_code == 301
    assert answer["Location"] == "/docs/"
    assert api.get(answer["Location"]).status_code == 200


def test_every_success_answer_says_what_data_holds(document):
    for name, _, operation in operations(document):
        success = operation["responses"]["200"]
        description = success["description"]
        assert description.startswith("Done: the success envelope; its `data` is "), name
        data = success["content"]["application/json"]["schema"]["properties"]["data"]
        if "$ref" in data:
            assert f"`{data['$ref'].rsplit('/', 1)[-1]}`" in description, name


def test_every_post_takes_an_idempotency_key_and_documents_its_refusals(document):
    posts = 0
    for name, method, operation in operations(document):
        keyed = [p for p in operation.get("parameters", []) if p["name"] == "Idempotency-Key"]
        if method != "post":
            assert keyed == [], name
            continue
        posts += 1
        assert len(keyed) == 1, name
        assert (keyed[0]["in"], keyed[0]["required"]) == ("header", False), name
        assert keyed[0]["schema"]["maxLength"] == 255
        examples = operation["responses"]["409"]["content"]["application/json"]["examples"]
        assert "IDEMPOTENCY_KEY_IN_USE" in examples, name
        refusals = operation["responses"]["400"]["content"]["application/json"]["examples"]
        assert refusals["IDEMPOTENCY_KEY_REUSED"]["value"]["error"]["code"] == 1016, name
        headers = operation["responses"]["200"]["headers"]
        assert headers["Idempotent-Replayed"]["schema"]["enum"] == ["true"], name
    assert posts >= 29
    assert CATALOG["IDEMPOTENCY_KEY_IN_USE"].code == 1015


def test_health_documents_the_maintenance_mode_as_a_string(document):
    mode = document["components"]["schemas"]["Maintenance"]["properties"]["mode"]

    assert mode["type"] == "string"
    assert mode["enum"] == ["off", "maintenance"]
    example = document["paths"]["/health"]["get"]["responses"]["200"]["content"]
    assert example["application/json"]["example"]["data"]["maintenance"] == {"mode": "off"}
