"""The console's home: an attention board. Each section is a few rows, each row a count of what
needs a person (or a state, such as the last wallet check) linking to the admin list filtered to
exactly those rows. The apps add their sections from their admin modules (``board_section``), as
they add the merchant page's panels, so core imports none of them; every count is an indexed
read (docs/admin.md; bench/admin_board.py measures the board at 10 million trades)."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AttentionRow:
    """One line of a section. ``count`` rows say how many; a row without one shows ``value``.
    ``alert`` marks what needs a person now; ``note`` says what the number means (a threshold,
    the oldest one's age)."""

    label: str
    count: int | None = None
    url: str = ""
    alert: bool = False
    note: str = ""
    value: str = ""


@dataclass(frozen=True)
class BoardSection:
    slug: str
    title: str
    position: int
    rows: Callable[[], list[AttentionRow]]


@dataclass(frozen=True)
class BoardPart:
    """A section as the home renders it: its rows and how long they took to count."""

    slug: str
    title: str
    rows: list[AttentionRow]
    milliseconds: float
    alerts: int = field(default=0)


# The sections of the home, by position (``board_section`` registers them).
BOARD_SECTIONS: list[BoardSection] = []


def board_section(
    *, slug: str, title: str, position: int
) -> Callable[[Callable[[], list[AttentionRow]]], Callable[[], list[AttentionRow]]]:
    """Registers ``rows() -> [AttentionRow]`` as a section of the console's home."""

    def register(rows: Callable[[], list[AttentionRow]]) -> Callable[[], list[AttentionRow]]:
        if any(section.slug == slug for section in BOARD_SECTIONS):
            raise ValueError(f"two board sections named {slug}")
        BOARD_SECTIONS.append(BoardSection(slug, title, position, rows))
        BOARD_SECTIONS.sort(key=lambda section: section.position)
        return rows

    return register


def board_build() -> list[BoardPart]:
    """Every section counted now, each timed (the home shows the times)."""
    parts = []
    for section in BOARD_SECTIONS:
        started = time.perf_counter()
        rows = section.rows()
        parts.append(
            BoardPart(
                slug=section.slug,
                title=section.title,
                rows=rows,
                milliseconds=(time.perf_counter() - started) * 1000,
                alerts=sum(row.alert for row in rows),
            )
        )
    return parts
