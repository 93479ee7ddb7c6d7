"""The quick start's front before the real web server (gunicorn as bin/start runs it, on the test
database): a staff login through the front is the staff member's alone, and the API's
``/openapi.json`` comes compressed only to a client that asked for it."""

import gzip
import json
import re
from collections.abc import Iterator

import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import User

from tests.faults.database import database_url
from tests.faults.processes import free_port, service_env, wait_until, web_server
from tests.feed.harness import WAIT_SECONDS, FeedProcess
from tests.hostile.battery import Attack
from tests.hostile.wire import healthy, send

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(scope="module")
def front(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory, feed_channel: str
) -> Iterator[FeedProcess]:
    """gunicorn on a Unix socket as bin/start binds it (and on a port, to wait for), and the
    front forwarding to that socket."""
    logs = tmp_path_factory.mktemp("front-web")
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    env["NUM_PROXIES"] = "1"
    port = free_port()
    web = web_server(env, port, logs / "gunicorn.log")
    web.argv += ["--bind", f"unix:{logs / 'web.sock'}"]
    front = FeedProcess(
        logs / "front.log", channel=feed_channel, api_upstream=f"unix:{logs / 'web.sock'}"
    )
    try:
        web.start()
        wait_until(lambda: healthy(port), "the web server", alive=[web])
        yield front.start()
    finally:
        front.stop()
        web.stop()


def test_a_staff_login_through_the_front_is_nobody_elses(front: FeedProcess):
    # Given a staff member logged in to the admin through the front
    User.objects.create_superuser("staff", "staff@example.com", "correct horse battery")
    staff = requests.Session()
    form = staff.get(f"{front.url}/admin/login/", timeout=WAIT_SECONDS)
    token = TOKEN.search(form.text)
    assert token is not None, form.text[:500]
    login = staff.post(
        f"{front.url}/admin/login/",
        data={
            "username": "staff",
            "password": "correct horse battery",
            "csrfmiddlewaretoken": token.group(1),
            "next": "/admin/",
        },
        allow_redirects=False,
        timeout=WAIT_SECONDS,
    )
    assert login.status_code == 302, login.text[:500]
    assert staff.get(f"{front.url}/admin/", timeout=WAIT_SECONDS).status_code == 200

    # When someone without the session asks for the admin's pages, then they are sent to log in
    for page in ("/admin/", "/admin/trading/trade/", "/admin/merchants/apikey/"):
        anonymous = requests.get(f"{front.url}{page}", allow_redirects=False, timeout=WAIT_SECONDS)
        assert anonymous.status_code == 302, (page, anonymous.text[:300])
        assert anonymous.headers["Location"].startswith("/admin/login/")
        assert "set-cookie" not in anonymous.headers


@pytest.mark.parametrize("accept_encoding", [None, "gzip"], ids=["none", "gzip"])
def test_the_openapi_document_is_compressed_only_when_asked(
    front: FeedProcess, accept_encoding: str | None
):
    headers = (("Accept-Encoding", accept_encoding),) if accept_encoding else ()

    answer = send(front.port, Attack("openapi", "GET", "/openapi.json", headers=headers), {})

    assert answer.status == 200, answer
    assert answer.headers.get("content-encoding") == accept_encoding
    document = json.loads(gzip.decompress(answer.body) if accept_encoding else answer.body)
    assert document["openapi"].startswith("3.1")
