"""The regular expression of the texts an integer query parameter takes (``QueryIntegerField``):
digits with an optional minus, leading zeros allowed, the value within its ranges.

OpenAPI 3.1's ``type: integer`` cannot say how an integer is written in a query string: JSON Schema
2020-12 counts ``20.0`` as the integer 20, and OpenAPI leaves the conversion of numbers to text to
each implementation. Its own advice (3.1.2, Appendix B "Data Type Conversion") is a string schema
with a ``pattern``; bounds on a string are written in the pattern itself."""

RangeOfIntegers = tuple[int, int]


def integer_text_pattern(ranges: tuple[RangeOfIntegers, ...]) -> str:
    """``^...$`` matching exactly the texts ``-?[0-9]+`` whose value lies in one of ``ranges``
    (each ``(low, high)``, both included): ``007`` is 7, ``-0`` is 0."""
    alternatives: list[str] = []
    for low, high in ranges:
        if low > high:
            raise ValueError(f"An empty range: {low} to {high}")
        if low <= 0 <= high:
            alternatives.append("-?0+")
        if high >= 1:
            alternatives.append(_then("0*", _canonical(max(low, 1), high)))
        if low <= -1:
            alternatives.append(_then("-0*", _canonical(max(-high, 1), -low)))
    return f"^(?:{'|'.join(alternatives)})$"


def _canonical(low: int, high: int) -> str:
    """The decimal texts without leading zeros of ``low`` to ``high`` (1 <= low <= high)."""
    by_length: list[tuple[int, str]] = []
    whole: list[int] = []  # the lengths whose every number is in the range: one alternative
    for digits in range(len(str(low)), len(str(high)) + 1):
        first, last = max(low, 10 ** (digits - 1)), min(high, 10**digits - 1)
        if (first, last) == (10 ** (digits - 1), 10**digits - 1):
            whole.append(digits)
        else:
            by_length.append((digits, _same_length(str(first), str(last))))
    if whole:
        by_length.append((whole[0], "[1-9]" + _repeat(whole[0] - 1, whole[-1] - 1)))
    return "|".join(text for _, text in sorted(by_length))


def _same_length(low: str, high: str) -> str:
    """The texts of ``low`` to ``high``, both of the same number of digits."""
    if low == high:
        return low
    rest = len(low) - 1
    if (low, high) == ("0" * len(low), "9" * len(low)):
        return _repeat(len(low), len(low))
    if low[1:] == "0" * rest and high[1:] == "9" * rest:
        return _digit(low[0], high[0]) + _repeat(rest, rest)
    if low[0] == high[0]:
        return _then(low[0], _same_length(low[1:], high[1:]))
    first, last = int(low[0]), int(high[0])
    parts = [_then(low[0], _same_length(low[1:], "9" * rest))]
    if last - first > 1:
        parts.append(_digit(str(first + 1), str(last - 1)) + _repeat(rest, rest))
    parts.append(_then(high[0], _same_length("0" * rest, high[1:])))
    return "|".join(parts)


def _then(prefix: str, rest: str) -> str:
    return f"{prefix}(?:{rest})" if "|" in rest else prefix + rest


def _digit(low: str, high: str) -> str:
    return low if low == high else f"[{low}-{high}]"


def _repeat(least: int, most: int) -> str:
    """``[0-9]`` ``least`` to ``most`` times."""
    if most == 0:
        return ""
    if least == most:
        return "[0-9]" if most == 1 else f"[0-9]{{{most}}}"
    return f"[0-9]{{{least},{most}}}"
