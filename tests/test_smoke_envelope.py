import uuid

import pytest

pytestmark = pytest.mark.django_db


def test_unknown_route_answers_the_404_envelope(api):
    response = api.get("/no/such/path")

    assert response.status_code == 404
    body = response.json()
    assert body["success"] is False
    assert body["error"] == {"code": 1002, "key": "NOT_FOUND", "message": "No such endpoint."}
    assert str(uuid.UUID(body["requestId"], version=4)) == body["requestId"]
    assert response["X-Request-Id"] == body["requestId"]
