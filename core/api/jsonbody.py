"""Request bodies read as JSON whatever a client sends: UTF-8 only, nesting bounded before the
parser recurses, numbers with a fraction kept as Decimal, no text PostgreSQL cannot store.

Python's JSON parser recurses in C once per nested array or object. A library the crypto code
imports (py_ecc, through eth-account) raises the interpreter's recursion limit to 100,000, so a
body of 100,000 ``[`` outgrows a thread's C stack and kills the whole worker process with
SIGSEGV before Python's own recursion check can step in. The nesting is therefore measured
first, by a linear scan that never recurses."""

import json
import re
from decimal import Decimal, InvalidOperation
from itertools import accumulate
from typing import Any

MAX_DEPTH = 32  # arrays and objects inside each other; the deepest valid body has 3

_STRUCTURE = b'"[]{}'
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in _STRUCTURE)
_DEPTH_STEP = [0] * 256
for _opening in b"[{":
    _DEPTH_STEP[_opening] = 1
for _closing in b"]}":
    _DEPTH_STEP[_closing] = -1

# What no PostgreSQL text can hold (NUL) and what no UTF-8 can encode (lone surrogates).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
UNSTORABLE_TEXT = "Must not contain NUL characters or unpaired surrogates."


class BodyRefusedError(Exception):
    """Well-formed JSON the API does not take; ``field`` is the dotted path of the culprit."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def json_body_loads(raw: bytes) -> Any:
    """The body's value. Raises BodyRefusedError, or ValueError for malformed JSON."""
    try:
        text = raw.decode("utf-8-sig")  # strict: invalid bytes and encoded surrogates refused
    except UnicodeDecodeError as exc:
        raise BodyRefusedError("body", "The body is not UTF-8 text.") from exc
    if nesting_exceeds(raw, MAX_DEPTH):
        raise BodyRefusedError("body", f"Arrays and objects nest deeper than {MAX_DEPTH} levels.")
    value = json.loads(text, parse_float=_decimal, parse_constant=_reject_constant)
    # Valid UTF-8 holds no surrogate, and the parser refuses raw control characters in strings:
    # a NUL or a lone surrogate can only come from a \u escape.
    if "\\u" in text:
        culprit = _unstorable_at(value, "")
        if culprit is not None:
            raise BodyRefusedError(culprit or "body", UNSTORABLE_TEXT)
    return value


def nesting_exceeds(raw: bytes, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` anywhere outside strings.

    Up to the first syntax error (where the parser stops) this is the parser's own depth: escaped
    backslashes and quotes are dropped first, so that every remaining ``"`` opens or closes a
    string, and the brackets between an odd and the next even quote are inside one."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside_strings = b"".join(unescaped.translate(None, _NOT_STRUCTURE).split(b'"')[::2])
    return max(accumulate(map(_DEPTH_STEP.__getitem__, outside_strings)), default=0) > limit


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:  # an exponent beyond what Decimal holds: 1e999999999999999999999
        raise ValueError(f"Number out of range: {text[:40]}") from None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a valid JSON number")


def _unstorable_at(value: Any, path: str) -> str | None:
    """The dotted path of the first string holding unstorable text (a property name is
    reported by its object's path, as it cannot be shown itself), or None."""
    if isinstance(value, str):
        return path if _UNSTORABLE.search(value) else None
    if isinstance(value, dict):
        entries = list(value.items())
        if any(_UNSTORABLE.search(name) for name, _ in entries):
            return path
    elif isinstance(value, list):
        entries = [(str(index), item) for index, item in enumerate(value)]
    else:
        return None
    for name, item in entries:
        culprit = _unstorable_at(item, f"{path}.{name}" if path else name)
        if culprit is not None:
            return culprit
    return None
