"""Hostile input, the class test: every operation of the API (the OpenAPI document's, plus routes
only the URL configuration knows) gets the same battery (tests/hostile/battery.py), with valid
credentials so that each request reaches the code that parses it, and without them. Each answer
must be a 4xx error envelope of the catalog, and the server must stay up: ``/health`` answers
after every request and no gunicorn worker is ever replaced (a worker killed by a SIGSEGV or by
its timeout would be)."""

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
from django.core.cache import cache

from tests.factories import make_actor
from tests.hostile.battery import attacks
from tests.hostile.operations import API_PREFIXES, Operation, Resolver, all_operations
from tests.hostile.server import Server
from tests.hostile.wire import health_problem, refusal_problem, send

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PARALLEL = 4  # operations attacked at once; gunicorn serves 2 x 4 threads


@dataclass
class Outcome:
    sent: int = 0
    failures: list[str] = field(default_factory=list)


def run_battery(
    server: Server, operation: Operation, resolve: Resolver, credentials: dict[str, str]
) -> Outcome:
    """Every attack on ``operation``, with and then without credentials, /health after each."""
    outcome = Outcome()
    for attack in attacks(operation, resolve):
        for given in (credentials, {}):
            where = f"{operation.label} [{attack.name}] with{'' if given else 'out'} credentials"
            required = attack.refused_as if given or attack.before_authentication else None
            outcome.sent += 1
            try:
                answer = send(server.port, attack, given)
            except OSError as exc:  # the connection died with its worker
                outcome.failures.append(f"{where}: no answer: {exc!r}")
            else:
                # Routes the document leaves out may refuse in their own way (any 4xx envelope).
                problem = refusal_problem(answer, required if operation.documented else None)
                if problem:
                    outcome.failures.append(f"{where}: {problem}")
            unhealthy = health_problem(server.port)
            if unhealthy:
                outcome.failures.append(
                    f"{where}: /health did not answer 200 after it: {unhealthy}"
                )
    return outcome


def test_every_operation_refuses_hostile_input_with_a_4xx_envelope_and_stays_up(
    server: Server,
) -> None:
    actor = make_actor(name="Hostile")
    credentials = {
        "apiKey": {"api-key": actor.api_key},
        "clientToken": {"Authorization": f"Bearer {server.client_token(actor.api_key)}"},
    }
    document = json.loads(server.get("/openapi.json").body)
    operations = all_operations(document)
    assert {op.path.split("/")[1] for op in operations} == {p.strip("/") for p in API_PREFIXES}
    resolve = Resolver(document)
    workers = server.workers()
    cache.clear()  # the rate-limit windows: every request must reach the code under attack

    with ThreadPoolExecutor(PARALLEL) as pool:
        outcomes = list(
            pool.map(
                lambda op: run_battery(server, op, resolve, credentials.get(op.security or "", {})),
                operations,
            )
        )

    sent = sum(outcome.sent for outcome in outcomes)
    failures = [failure for outcome in outcomes for failure in outcome.failures]
    if server.workers() != workers:
        failures.append(f"a worker was replaced:\n{server.process.log_tail()}")
    assert sent > 5000
    assert not failures, f"{len(failures)} of {sent} requests failed:\n" + "\n".join(failures)
