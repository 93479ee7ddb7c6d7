"""The rate limit at the end of each operation's description, with the operations that spend the
same budget: a postprocessing hook, as only the whole document knows them."""

from collections import defaultdict
from typing import Any

from core.api.docs import rate_limit_markdown


def rate_limit_descriptions(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: each description ends with its operation's rate limit, naming the
    other operations that spend the same budget (only the whole document knows them)."""
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, methods in result.get("paths", {}).items()
        for method, operation in methods.items()
    ]
    by_budget: dict[str, list[str]] = defaultdict(list)
    for name, operation in operations:
        if "x-rateLimit" in operation:
            by_budget[operation["x-rateLimit"]["budget"]].append(name)
    for name, operation in operations:
        limit = operation.get("x-rateLimit")
        peers = [peer for peer in by_budget[limit["budget"]] if peer != name] if limit else []
        paragraph = rate_limit_markdown(limit, peers)
        description = operation.get("description", "")
        operation["description"] = f"{description}\n\n{paragraph}" if description else paragraph
    return result
