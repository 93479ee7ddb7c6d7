"""What the OpenAPI document tells an integrator about an operation beyond its shapes: a summary, a
description, examples of the request and the answer (``OperationDoc``, declared by each view as
``ApiView.doc``), and its rate limit (``RateLimitDoc``, from the registry the views count with).

``config.api.schema`` renders them; docstrings never reach the document (they speak to developers).
"""

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# An example as it travels: JSON objects, arrays, strings, numbers, booleans and null.
Json = Any


@dataclass(frozen=True)
class OperationDoc:
    """``summary``: a short imperative line. ``description``: Markdown for the integrator (what
    the operation does, when to use it, what happens next), without the rate limit, the
    authentication or the errors, which the document adds from their own declarations.
    ``parameters``: an example value per path or query parameter. ``request``: an example body.
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
