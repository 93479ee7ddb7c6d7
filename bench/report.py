"""The suite's markdown: one row per scenario with the load it ran under, then the targets."""

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness import Result

READS = {
    "prices",
    "market_search",
    "market_item",
    "inventory",
    "trades_page1",
    "trades_deep",
    "ledger_list",
    "ledger_lookup",
    "crypto_address",
}
READ_SHARE = 0.60
AUTHENTICATE_RPS = 1_000
SEARCH_P95_MS = 50
DEPTH_RATIO = 1.5
BUY_RPS = 300
WORKER_PEAK_MB = 300
# More refused requests than this and a figure measures the refusals, not the endpoint.
NON_2XX_SHARE = 0.01


@dataclass(frozen=True)
class Measured:
    key: str
    label: str
    result: Result | None  # None: the endpoint is not on this commit
    lines: int = 0  # distinct requests the load cycled through
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    cores: dict[str, float] = field(default_factory=dict)  # CPU cores used, by kind of process
    peak_rss_mb: float = 0.0
    wallet_clean: bool | None = None

    @classmethod
    def unavailable(cls, key: str, label: str) -> "Measured":
        return cls(key=key, label=label, result=None)

    def with_wallet(self, clean: bool) -> "Measured":
        return replace(self, wallet_clean=clean)

    @property
    def web_cores(self) -> float:
        """Cores used by the gunicorn master and its workers."""
        return sum(cpu for kind, cpu in self.cores.items() if kind.startswith("web"))

    @property
    def web_ms_per_request(self) -> float:
        """Web CPU per request: robust to a busy machine where req/s is not."""
        r = self.result
        return 1000 * self.web_cores / r.rps if r is not None and r.rps else 0.0

    @property
    def valid(self) -> bool:
        r = self.result
        return r is not None and r.non_2xx + r.errors <= NON_2XX_SHARE * max(1, r.requests)

    def summary(self) -> str:
        r = self.result
        if r is None:
            return f"{self.label}: not available"
        return (
            f"{self.label}: {r.rps:.0f} req/s, p50 {r.p50_ms:.1f} p95 {r.p95_ms:.1f} "
            f"p99 {r.p99_ms:.1f} ms, {r.non_2xx} non-2xx, {r.errors} errors, "
            f"peak worker {self.peak_rss_mb:.0f} MB, load {self.load_before[0]:.2f} -> "
            f"{self.load_after[0]:.2f}, other CPU {self.cores.get('other', 0):.2f}"
        )


@dataclass(frozen=True)
class Verdict:
    target: str
    met: bool | None  # None: not measured
    figure: str


def verdicts(measured: Sequence[Measured]) -> dict[str, list[Verdict]]:
    """The issue's targets, per scenario key ("memory": the whole run)."""
    by_key = {m.key: m for m in measured}
    baseline = by_key.get("baseline")
    found: dict[str, list[Verdict]] = {}

    def add(key: str, target: str, met: bool | None, figure: str) -> None:
        m = by_key.get(key)
        if m is not None and m.result is not None and not m.valid:
            met, figure = False, f"{figure}; invalid: {m.result.non_2xx} non-2xx"
        found.setdefault(key, []).append(Verdict(target, met, figure))

    for key in [m.key for m in measured if m.key in READS]:
        r = by_key[key].result
        if r is None or baseline is None or baseline.result is None:
            add(key, f">= {READ_SHARE:.0%} of baseline req/s", None, "not measured")
            continue
        share = r.rps / baseline.result.rps
        add(key, f">= {READ_SHARE:.0%} of baseline req/s", share >= READ_SHARE, f"{share:.0%}")
    if (m := by_key.get("authenticate")) and m.result:
        rps = m.result.rps
        add(m.key, f">= {AUTHENTICATE_RPS:,} req/s", rps >= AUTHENTICATE_RPS, f"{rps:.0f}")
    if (m := by_key.get("market_search")) and m.result:
        p95 = m.result.p95_ms
        add(m.key, f"p95 < {SEARCH_P95_MS} ms", p95 < SEARCH_P95_MS, f"{p95:.1f} ms")
    page1, deep = by_key.get("trades_page1"), by_key.get("trades_deep")
    if page1 and deep and page1.result and deep.result:
        ratio = deep.result.p95_ms / page1.result.p95_ms
        add(deep.key, f"p95 <= {DEPTH_RATIO}x page 1", ratio <= DEPTH_RATIO, f"{ratio:.2f}x")
    if (m := by_key.get("buy")) and m.result:
        add(m.key, f">= {BUY_RPS} req/s", m.result.rps >= BUY_RPS, f"{m.result.rps:.0f}")
        clean = m.wallet_clean
        add(m.key, "check_wallet clean", clean, {True: "clean", False: "BROKEN"}.get(clean, "-"))
    peaks = [m.peak_rss_mb for m in measured if m.result is not None]
    if peaks:
        peak = max(peaks)
        found["memory"] = [
            Verdict(
                f"web worker peak RSS < {WORKER_PEAK_MB} MB",
                peak < WORKER_PEAK_MB,
                f"{peak:.0f} MB",
            )
        ]
    return found


def _met(met: bool | None) -> str:
    return {True: "yes", False: "**no**", None: "-"}[met]


def _row(m: Measured, baseline: Measured | None, found: list[Verdict]) -> str:
    targets = "; ".join(v.target for v in found) or "-"
    met = "; ".join(f"{_met(v.met)} ({v.figure})" for v in found) or "-"
    if m.result is None:
        return f"| {m.label} | not available | | | | | | | {targets} | {met} | | | |"
    r = m.result
    share = (
        f"{r.rps / baseline.result.rps:.2f}" if baseline is not None and baseline.result else "-"
    )
    load = f"{m.load_before[0]:.2f} → {m.load_after[0]:.2f}"
    return (
        f"| {m.label} | {r.rps:.0f} | {r.p50_ms:.1f} | {r.p95_ms:.1f} | {r.p99_ms:.1f} "
        f"| {r.non_2xx + r.errors} | {share} | {m.web_ms_per_request:.1f} | {targets} | {met} "
        f"| {m.peak_rss_mb:.0f} | {load} | {m.cores.get('other', 0):.2f} |"
    )


def _cores_row(m: Measured) -> str:
    split = " / ".join(f"{m.cores.get(f'web {n}', 0):.2f}" for n in (1, 2))
    kinds = ("worker", "postgres", "redis", "wrk", "other")
    cells = " | ".join(f"{m.cores.get(kind, 0):.2f}" for kind in kinds)
    return f"| {m.label} | {m.web_cores:.2f} ({split}) | {cells} |"


def report_write(
    path: Path,
    measured: Sequence[Measured],
    *,
    started: str,
    commit: str,
    seconds: int,
    setup: str,
    notes: Sequence[str],
) -> None:
    by_key = {m.key: m for m in measured}
    baseline = by_key.get("baseline")
    found = verdicts(measured)
    lines = [
        "# Benchmark suite",
        "",
        f"{started}, commit {commit}; {os.cpu_count()} cores; {setup}; "
        f"{seconds} s measured per scenario. Load averages are the machine's (1 minute, "
        "shared with other sessions) just before the warm-up and just after the run; "
        '"other CPU" is the cores used during the run by processes that are neither this '
        "stack, PostgreSQL, Redis nor wrk. Web CPU ms/req: the gunicorn processes' CPU time per "
        "request served, which depends little on how busy the machine is (req/s does). Worker "
        "peak: the larger peak resident set (VmHWM) of the two web workers over the warm-up "
        "and the run.",
        "",
        "| endpoint | req/s | p50 ms | p95 ms | p99 ms | non-2xx | x baseline | web CPU ms/req "
        "| target | met? | worker peak MB | load 1m before → after | other CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|---:|",
    ]
    lines += [_row(m, baseline, found.get(m.key, [])) for m in measured]
    lines += ["", "## Targets", ""]
    for key in [m.key for m in measured if m.key in found] + ["memory"]:
        label = by_key[key].label if key in by_key else "the whole run"
        lines += [f"- {label}: {v.target}: {_met(v.met)} ({v.figure})" for v in found.get(key, [])]
    lines += [
        "",
        "## How the cores were shared during each run",
        "",
        "CPU cores used (of 2) by this gunicorn (web: in all, then each of its two workers), "
        "the Celery worker and beat (worker), all PostgreSQL and Redis processes (whoever they "
        "served), wrk, and everything else.",
        "",
        "| endpoint | web (worker 1 / 2) | worker | postgres | redis | wrk | other |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_cores_row(m) for m in measured if m.result is not None]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
