"""The console's "View site" link opens the API reference, the one site this service has."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_view_site_opens_the_api_reference(admin_client):
    page = admin_client.get("/admin/").content.decode()

    link = re.search(r'<a href="([^"]+)">View site</a>', page)
    assert link is not None
    assert link.group(1) == "/docs/"
    docs = admin_client.get(link.group(1))
    assert docs.status_code == 200
    assert "swagger-ui" in docs.content.decode()
