"""What the OpenAPI document tells an integrator about an operation beyond its shapes: a summary, a
description, examples of the request and the answer (``OperationDoc``, declared by each view as
``ApiView.doc``), its rate limit (``RateLimitDoc``, from the registry the views count with), and
the guides (``GUIDES``: docs/*.md served under ``/docs/``) its description links to.

``core.api.schema`` renders them; docstrings never reach the document (they speak to developers).
"""

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# An example as it travels: JSON objects, arrays, strings, numbers, booleans and null.
Json = Any


@dataclass(frozen=True)
class Guide:
    """A page of docs/ served at ``/docs/<slug>`` (``config.guides``) and linked from the API
    reference: what integrators read beyond the operations."""

    slug: str
    file: str  # under docs/
    title: str

    @property
    def path(self) -> str:
        return f"/docs/{self.slug}"

    def link(self, text: str = "") -> str:
        return f"[{text or self.title}]({self.path})"


WEBHOOKS_GUIDE = Guide("webhooks", "webhooks.md", "Receiving webhooks")
ERRORS_GUIDE = Guide("errors", "errors.md", "Errors")
IDEMPOTENCY_GUIDE = Guide("idempotency", "idempotency.md", "Safe retries")
SANDBOX_GUIDE = Guide("sandbox", "sandbox.md", "The sandbox")
FEED_GUIDE = Guide("feed", "feed.md", "The real-time feed")
SDK_GUIDE = Guide("assetpay-sdk", "assetpay-sdk.md", "Coming from the AssetPay SDK")
GUIDES = (WEBHOOKS_GUIDE, ERRORS_GUIDE, IDEMPOTENCY_GUIDE, SANDBOX_GUIDE, FEED_GUIDE, SDK_GUIDE)

# The document's own description (``SPECTACULAR_SETTINGS["DESCRIPTION"]``): what holds for every
# operation, so that each operation's description speaks only of itself.
API_DESCRIPTION = f"""
Merchant-facing API for trading game items: deposits (items sold to the service, credited to your
USD wallet), withdrawals (market listings bought and delivered by trade offer), prices and market
browsing, crypto deposits and cashouts, and your wallet's ledger.

**Guides:** {", ".join(guide.link() for guide in GUIDES)}.

**Callers.** Your backend calls with its API key in the `api-key` header (`/auth`, `/secure`,
`/v1`, `/sandbox`). Your end users' apps call `/client/*` with a client token that your backend
gets from `POST /auth/authenticate-client`, in `Authorization: Bearer <token>`.

**Envelope.** Every answer is `{{requestId, success: true, data}}` or
`{{requestId, success: false, error: {{code, key, message, fields?, details?}}}}`; the `requestId`
is also the `X-Request-Id` header. Branch on `error.key` or `error.code`, never on `message`.
`VALIDATION_FAILED` names each refused input in `fields` (dotted paths such as `items.0.price`).
Each operation lists the errors it can answer with, with an example body each; every code is in
{ERRORS_GUIDE.link("the error catalog")}.

**Values.** USD amounts are JSON numbers with two decimals (fields ending in `Cents` are integer
cents); token amounts are decimal strings; times are UTC ISO 8601 with milliseconds and `Z`.
Request bodies are checked strictly: unknown properties are refused and types are not coerced.
The schemas are JSON Schema 2020-12 (OpenAPI 3.1): an integer of a body is a JSON number without
a fraction, so `2.0` is taken as `2` (`2.5` and `"2"` are refused). An integer in a query string
is written in digits (`?limit=20`, not `?limit=20.0`): such parameters are given as strings
whose pattern holds the digits and the bounds, which their descriptions say in words.

**Limits.** Each operation gives its rate limit, per merchant, by merchant tier (verified or
not). A refused request is 429 `RATE_LIMITED` with `Retry-After`.

**Events.** Trade and crypto changes are sent to your callback URL as signed webhooks (Standard
Webhooks); withdrawals and client cashouts wait for your approval there first. Each is declared
under `webhooks` with its body and what each answer of yours does. The receiving side's guide,
{WEBHOOKS_GUIDE.link()}, shows how to verify in Python, Node and TypeScript, approve and reject,
retries, ordering and a receiver to copy; in the sandbox, `POST /sandbox/webhooks/test` sends
your receiver a signed test event of any type. The same changes reach open sockets at once
through {FEED_GUIDE.link()} (Socket.IO, best effort).

**Safe retries.** Every POST takes an `Idempotency-Key` header: retried with the same key and
body, it runs once and answers its first answer again (`Idempotent-Replayed: true`):
{IDEMPOTENCY_GUIDE.link()}.

**Sandbox.** With the sandbox on, the `/sandbox/*` helpers move the simulated outside world
(platform users, bots, trades, chains, the identity provider, the clock) for your account:
{SANDBOX_GUIDE.link()}.
"""


@dataclass(frozen=True)
class OperationDoc:
    """``summary``: a short imperative line. ``description``: Markdown for the integrator (what
    the operation does, when to use it, what happens next), without the rate limit, the
    authentication or the errors, which the document adds from their own declarations.
    ``parameters``: an example value per path or query parameter, as the URL writes it (text).
    ``request``: an example body.
    ``response``: an example of the success envelope's ``data``. ``error_details``: the
    ``details`` this operation puts in an error, by key, for that error's example."""

    summary: str
    description: str
    parameters: Mapping[str, Json] = field(default_factory=dict)
    request: Json = None
    response: Json = None
    error_details: Mapping[str, Json] = field(default_factory=dict)

    @property
    def markdown(self) -> str:
        return inspect.cleandoc(self.description)


def paragraphs(*texts: str) -> str:
    """One description from indented triple-quoted texts, each dedented on its own (a text put
    into another with an f-string would keep its own indentation, and Markdown would show it
    as code)."""
    return "\n\n".join(inspect.cleandoc(text) for text in texts)


@dataclass(frozen=True)
class Window:
    limit: int
    seconds: int

    def as_json(self) -> dict[str, int]:
        return {"limit": self.limit, "windowSeconds": self.seconds}


@dataclass(frozen=True)
class RateLimitDoc:
    """One budget of requests per merchant; operations naming the same ``budget`` share it."""

    budget: str
    verified: Window
    unverified: Window

    def as_extension(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "verified": self.verified.as_json(),
            "unverified": self.unverified.as_json(),
        }


def _per(seconds: int) -> str:
    for unit, length in (("hour", 3600), ("minute", 60)):
        if seconds == length:
            return unit
        if seconds % length == 0:
            return f"{seconds // length} {unit}s"
    return f"{seconds} seconds"


# Beyond this many, operations sharing a budget are counted, not named (each names its budget).
MAX_NAMED_PEERS = 4


def rate_limit_markdown(extension: Mapping[str, Any] | None, shared_with: list[str]) -> str:
    """The rate-limit paragraph of a description, from the operation's ``x-rateLimit``."""
    if extension is None:
        return "**Rate limit:** none."
    verified, unverified = extension["verified"], extension["unverified"]
    text = (
        f"**Rate limit:** {verified['limit']:,} requests per {_per(verified['windowSeconds'])} "
        f"for a verified merchant, {unverified['limit']:,} per "
        f"{_per(unverified['windowSeconds'])} for an unverified one; counted per merchant, "
        "whichever of its keys or clients calls. Beyond it: 429 `RATE_LIMITED` with "
        "`Retry-After`; counted answers carry `X-RateLimit-Limit` and `X-RateLimit-Remaining`."
    )
    budget = f"This budget (`{extension['budget']}`) is also spent by"
    if len(shared_with) > MAX_NAMED_PEERS:
        text += f" {budget} {len(shared_with)} other operations."
    elif shared_with:
        text += f" {budget} " + ", ".join(f"`{op}`" for op in shared_with) + "."
    return text
