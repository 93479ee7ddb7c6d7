"""The real web server the hostile-input tests attack: gunicorn started as deployed
(``tests.faults.processes.web_server``, with config/gunicorn.py) on the test database, so that
a request that kills a worker shows as a dead connection and a replaced worker."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from tests.factories import auth_body
from tests.faults.database import database_url
from tests.faults.processes import (
    Process,
    child_pids,
    free_port,
    service_env,
    wait_until,
    web_server,
)
from tests.hostile.battery import Attack
from tests.hostile.wire import Answer, healthy, send

WORKERS = 2  # config/gunicorn.py


@dataclass
class Server:
    port: int
    process: Process

    def workers(self) -> list[int]:
        return sorted(child_pids(self.process.pid))

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return send(self.port, Attack("setup", "GET", path), headers or {})

    def client_token(self, api_key: str) -> str:
        """A client token of the key's merchant, for the platform user of partner 1."""
        body = json.dumps(auth_body()).encode()
        answer = send(
            self.port,
            Attack("setup", "POST", "/auth/authenticate-client", body),
            {"api-key": api_key},
        )
        assert answer.status == 200, answer
        return str(json.loads(answer.body)["data"]["token"])


@contextmanager
def serving(log: Path, **extra_env: str) -> Iterator[Server]:
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL) | extra_env
    port = free_port()
    process = web_server(env, port, log).start()
    try:
        up = Server(port, process)
        wait_until(lambda: healthy(port), "the web server", alive=[process])
        wait_until(lambda: len(up.workers()) == WORKERS, "every worker", alive=[process])
        yield up
    finally:
        process.stop()
