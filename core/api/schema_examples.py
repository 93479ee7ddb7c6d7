"""The example bodies of an operation's answers: its success, and one per error it can give."""

from collections.abc import Mapping
from typing import Any

from core.errors import DomainError, ErrorSpec

# The requestId of every example envelope (each answer has its own uuid4).
EXAMPLE_REQUEST_ID = "4f6b2c1e-8d3a-4b7e-9c51-0a2d6e8f1b37"

# What ``details`` holds in the errors that carry the same wherever they come from; what differs
# by operation is its ``OperationDoc.error_details``.
DETAILS_EXAMPLES: dict[str, dict[str, Any]] = {
    "USER_NOT_TRADEABLE": {"antiCheatBanned": True, "gameBans": 1, "economyBan": "none"},
    "ONCHAIN_WITHDRAW_BELOW_MIN": {"feeCents": 500, "minReceiveCents": 1000},
}


def success_example(data: Any) -> dict[str, Any]:
    return {"requestId": EXAMPLE_REQUEST_ID, "success": True, "data": data}


def error_examples(
    specs: list[ErrorSpec], refused_input: DomainError, details: Mapping[str, Any]
) -> dict[str, Any]:
    """One example body per error: the catalog's code, key and message; the fields a refused
    input of this very operation gives; the details the services attach."""
    examples: dict[str, Any] = {}
    for spec in specs:
        error: dict[str, Any] = {"code": spec.code, "key": spec.key, "message": spec.message}
        if spec.key == "VALIDATION_FAILED":
            error |= {"message": refused_input.message, "fields": refused_input.fields}
        if spec.key in details or spec.key in DETAILS_EXAMPLES:
            error["details"] = details.get(spec.key, DETAILS_EXAMPLES.get(spec.key))
        examples[spec.key] = {
            "summary": f"{spec.code} {spec.key}",
            "value": {"requestId": EXAMPLE_REQUEST_ID, "success": False, "error": error},
        }
    return examples
