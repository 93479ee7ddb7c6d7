"""Every ``/sandbox/`` helper that sets a switch of the caller's world races ``POST
/sandbox/reset``, which deletes those switches, and answers 200 each time (issue 25, item 4: the
autopilot's answered 500, an IntegrityError on its state row, 38 times in about 2,000 calls:
its read, then write, found the row gone between the two)."""

import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.factories import make_actor, platform_id

ROUNDS = 40
PAIRS = 4

SETTERS = {
    "autopilot": ("/sandbox/autopilot", {"enabled": False}),
    "platform user": ("/sandbox/platform/users", {"platformId": platform_id(9), "escrowDays": 3}),
    "chain": ("/sandbox/crypto/chains/ETH", {"paused": True}),
    "identity provider": ("/sandbox/verification-provider", {"status": "offline"}),
    "bots": ("/sandbox/bots", {"status": "degraded"}),
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("helper", list(SETTERS))
def test_a_helper_racing_reset_always_answers(helper):
    actor, _bystander = make_actor(name="Racer"), make_actor(name="Bystander")
    path, body = SETTERS[helper]
    statuses: list[tuple[str, int, bytes]] = []
    barrier = threading.Barrier(PAIRS * 2)

    def call(what: str) -> None:
        client = APIClient()
        barrier.wait()
        try:
            for _ in range(ROUNDS):
                if what == "set":
                    response = client.post(path, body, format="json", headers=actor.headers)
                else:
                    response = client.post("/sandbox/reset", headers=actor.headers)
                statuses.append((what, response.status_code, response.content[:200]))
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=(what,)) for what in ("set", "reset") * PAIRS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(statuses) == PAIRS * 2 * ROUNDS
    assert [s for s in statuses if s[1] != 200] == []
