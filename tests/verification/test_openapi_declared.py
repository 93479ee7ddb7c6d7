"""The verification operations in /openapi.json, with the errors each one can answer."""

import pytest

pytestmark = pytest.mark.django_db


def _codes(operation: dict, status: str) -> set[int]:
    schema = operation["responses"][status]["content"]["application/json"]["schema"]
    return set(schema["properties"]["error"]["properties"]["code"]["enum"])


@pytest.fixture
def paths(api) -> dict:
    response = api.get("/openapi.json")
    assert response.status_code == 200
    return response.json()["paths"]


def test_client_operations(paths):
    start = paths["/client/verification/start"]["post"]
    status = paths["/client/verification/status"]["get"]
    link = paths["/client/verification/link"]["post"]

    for operation in (start, status, link):
        assert operation["security"] == [{"clientToken": []}]
        assert {1102, 1108} <= _codes(operation, "401")
        assert _codes(operation, "429") == {1005}
    assert _codes(start, "409") == {3006, 3007, 1015}  # 1015: a POST's Idempotency-Key
    assert 3008 in _codes(start, "503")
    assert "404" not in link["responses"]
    assert _codes(link, "409") == {3006, 1015}
    assert _codes(link, "403") == {3011}
    data = status["responses"]["200"]["content"]["application/json"]["schema"]["properties"]
    assert data["data"]["$ref"].endswith("/VerificationStatusOut")


def test_sandbox_helpers(paths):
    decide = paths["/sandbox/verification/{dossierId}"]["post"]
    provider = paths["/sandbox/verification-provider"]["post"]

    for operation in (decide, provider):
        assert operation["security"] == [{"apiKey": []}]
    assert _codes(decide, "404") == {1002}
    assert _codes(decide, "409") == {3002, 1015}
