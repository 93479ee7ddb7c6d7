"""The suite's markdown: one row per scenario as a share of its limit measured just before it
(the limit app under the same server), with the load it ran under, then the targets of
issues 17 and 32."""

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness import Result
from limits import BUY, LIMIT_LABELS, NO_IO, PAGE, READ, WRITE

# Every read endpoint at this share of the read limit or more.
READ_SHARE = 0.60
PAGE_SHARE = 0.60  # trade pages, of the page limit
NO_IO_SHARE = 0.50  # the no-op, of the no-I/O limit
AUTHENTICATE_SHARE = 0.60  # of the write limit
BUY_SHARE = 0.40  # of the buy limit
BUY_P99_MS = 150
DEPTH_RATIO = 1.5  # trades 90,000 deep against page 1: p95
WORKER_PEAK_MB = 300
DRAIN_SECONDS = 10  # the Celery worker done with the buys' backlog within this of the load's end
# More refused requests than this and a figure measures the refusals, not the endpoint.
NON_2XX_SHARE = 0.01
# Endpoints the read target does not apply to, and why (bench/README.md).
NOT_READ_TARGETS = {"prices": "a 5.7 MB body: measures moving bytes"}


@dataclass(frozen=True)
class Measured:
    key: str
    label: str
    result: Result | None  # None: the endpoint is not on this commit
    limit_kind: str = READ
    limit: Result | None = None  # the limit of its kind, measured just before it
    lines: int = 0  # distinct requests the load cycled through
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    cores: dict[str, float] = field(default_factory=dict)  # CPU cores used, by kind of process
    peak_rss_mb: float = 0.0
    wallet_clean: bool | None = None
    drain_seconds: float | None = None  # writes: until the worker finished what they left

    @classmethod
    def unavailable(cls, key: str, label: str) -> "Measured":
        return cls(key=key, label=label, result=None)

    def with_wallet(self, clean: bool) -> "Measured":
        return replace(self, wallet_clean=clean)

    def with_drain(self, seconds: float | None) -> "Measured":
        return replace(self, drain_seconds=seconds)

    @property
    def share(self) -> float | None:
        """req/s as a share of the limit's req/s."""
        if self.result is None or self.limit is None or not self.limit.rps:
            return None
        return self.result.rps / self.limit.rps

    @property
    def web_cores(self) -> float:
        """Cores used by the web server's master and its workers."""
        return sum(cpu for kind, cpu in self.cores.items() if kind.startswith("web"))

    def _worker_cores(self) -> list[float]:
        return [cpu for kind, cpu in sorted(self.cores.items()) if kind.startswith("web ")]

    def uneven(self, least_share: float) -> bool:
        """One web worker did under ``least_share`` of the workers' CPU: keep-alive connections
        landed mostly on the other, and the run measured about one core."""
        workers = self._worker_cores()
        total = sum(workers)
        return len(workers) > 1 and total > 0 and min(workers) < least_share * total

    def web_spread(self) -> str:
        """The web workers' cores, as "0.44 / 0.02"."""
        return " / ".join(f"{cpu:.2f}" for cpu in self._worker_cores())

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
        limit = (
            f" = {self.share:.0%} of the {self.limit_kind} limit ({self.limit.rps:.0f} req/s)"
            if self.limit is not None and self.share is not None
            else ""
        )
        return (
            f"{self.label}: {r.rps:.0f} req/s{limit}, p50 {r.p50_ms:.1f} p95 {r.p95_ms:.1f} "
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
    found: dict[str, list[Verdict]] = {}

    def add(key: str, target: str, met: bool | None, figure: str) -> None:
        m = by_key.get(key)
        if m is not None and m.result is not None and not m.valid:
            met, figure = False, f"{figure}; invalid: {m.result.non_2xx} non-2xx"
        found.setdefault(key, []).append(Verdict(target, met, figure))

    def share_target(m: Measured, least: float) -> None:
        target = f">= {least:.0%} of the {m.limit_kind} limit"
        if m.share is None:
            add(m.key, target, None, "not measured")
        else:
            add(m.key, target, m.share >= least, f"{m.share:.0%}")

    for m in measured:
        if m.result is None:
            continue
        if m.limit_kind == READ and m.key not in NOT_READ_TARGETS:
            share_target(m, READ_SHARE)
        elif m.limit_kind == PAGE:
            share_target(m, PAGE_SHARE)
        elif m.limit_kind == NO_IO:
            share_target(m, NO_IO_SHARE)
        elif m.key in NOT_READ_TARGETS:
            add(m.key, "read target", None, f"not applied: {NOT_READ_TARGETS[m.key]}")
    if (m := by_key.get("authenticate")) and m.result:
        share_target(m, AUTHENTICATE_SHARE)
    page1, deep = by_key.get("trades_page1"), by_key.get("trades_deep")
    if page1 and deep and page1.result and deep.result:
        ratio = deep.result.p95_ms / page1.result.p95_ms
        add(deep.key, f"p95 <= {DEPTH_RATIO}x page 1", ratio <= DEPTH_RATIO, f"{ratio:.2f}x")
    if (m := by_key.get("buy")) and m.result:
        share_target(m, BUY_SHARE)
        p99 = m.result.p99_ms
        add(m.key, f"p99 < {BUY_P99_MS} ms", p99 < BUY_P99_MS, f"{p99:.0f} ms")
        clean = m.wallet_clean
        add(m.key, "check_wallet clean", clean, {True: "clean", False: "BROKEN"}.get(clean, "-"))
        drained = m.drain_seconds
        add(
            m.key,
            f"worker drains the backlog within {DRAIN_SECONDS} s",
            None
            if drained is None and m.wallet_clean is None
            else (drained is not None and drained <= DRAIN_SECONDS),
            "never (600 s)" if drained is None else f"{drained:.0f} s",
        )
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


def _row(m: Measured, found: list[Verdict]) -> str:
    targets = "; ".join(v.target for v in found) or "-"
    met = "; ".join(f"{_met(v.met)} ({v.figure})" for v in found) or "-"
    if m.result is None:
        return f"| {m.label} | not available | | | | | | | | | {targets} | {met} | | |"
    r = m.result
    limit = f"{m.limit.rps:.0f}" if m.limit is not None else "-"
    share = f"**{m.share:.0%}**" if m.share is not None else "-"
    return (
        f"| {m.label} | {r.rps:.0f} | {m.limit_kind} | {limit} | {share} | {r.p50_ms:.1f} "
        f"| {r.p95_ms:.1f} | {r.p99_ms:.1f} | {r.non_2xx + r.errors} "
        f"| {m.web_ms_per_request:.1f} | {targets} | {met} | {m.peak_rss_mb:.0f} "
        f"| {m.cores.get('other', 0):.2f} |"
    )


def _limits_table(measured: Sequence[Measured]) -> list[str]:
    """Every limit measurement of the run, in order, so their spread shows the noise."""
    lines = [
        "| limit | before | req/s | p50 ms | p95 ms | non-2xx |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for m in measured:
        if m.limit is not None:
            r = m.limit
            lines.append(
                f"| {LIMIT_LABELS[m.limit_kind]} | {m.label} | {r.rps:.0f} | {r.p50_ms:.1f} "
                f"| {r.p95_ms:.1f} | {r.non_2xx + r.errors} |"
            )
    for kind in (NO_IO, READ, WRITE, PAGE, BUY):
        rates = [m.limit.rps for m in measured if m.limit is not None and m.limit_kind == kind]
        if rates:
            lines.append(
                f"| {LIMIT_LABELS[kind]}: range over the run | | {min(rates):.0f}-{max(rates):.0f} "
                "| | | |"
            )
    return lines


def _cores_row(m: Measured) -> str:
    split = " / ".join(f"{m.cores.get(f'web {n}', 0):.2f}" for n in (1, 2))
    kinds = ("worker", "postgres", "redis", "wrk", "other")
    cells = " | ".join(f"{m.cores.get(kind, 0):.2f}" for kind in kinds)
    return f"| {m.label} | {m.web_cores:.2f} ({split}) | {cells} |"


def targets_lines(measured: Sequence[Measured]) -> list[str]:
    by_key = {m.key: m for m in measured}
    found = verdicts(measured)
    lines = []
    for key in [m.key for m in measured if m.key in found] + ["memory"]:
        label = by_key[key].label if key in by_key else "the whole run"
        lines += [f"- {label}: {v.target}: {_met(v.met)} ({v.figure})" for v in found.get(key, [])]
    judged = [v for vs in found.values() for v in vs if v.met is not None]
    missed = [v for v in judged if not v.met]
    lines += [
        "",
        f"**Targets: {len(judged) - len(missed)} of {len(judged)} met.**"
        if judged
        else "**Targets: none measured.**",
    ]
    return lines


def report_write(
    path: Path,
    measured: Sequence[Measured],
    *,
    started: str,
    commit: str,
    seconds: int,
    setup: str,
    notes: Sequence[str],
    sections: Sequence[str] = (),
) -> None:
    """The report; ``sections``: markdown lines of scenarios measured their own way (the
    pipeline's), after the targets."""
    found = verdicts(measured)
    lines = [
        "# Benchmark suite",
        "",
        f"{started}, commit {commit}; {os.cpu_count()} cores; {setup}; "
        f"{seconds} s measured per scenario. Each endpoint is a share of its limit: the limit "
        "app (bench/limitapp) under the same server, measured for as long just before it, so "
        "both saw the same machine (reads against the read limit, trade pages against the page "
        "limit, buys against the buy limit, other writes against the write limit, the "
        'service\'s no-op against the no-I/O limit). "Other CPU" is the cores used '
        "during the run by processes that are neither this stack, PostgreSQL, Redis nor wrk. "
        "Web CPU ms/req: the web server's CPU time per request served. Worker peak: the larger "
        "peak resident set (VmHWM) of the two web workers over the warm-up and the run.",
        "",
        "| endpoint | req/s | limit | limit req/s | of limit | p50 ms | p95 ms | p99 ms "
        "| non-2xx | web CPU ms/req | target | met? | worker peak MB | other CPU |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    lines += [_row(m, found.get(m.key, [])) for m in measured]
    lines += ["", "## Targets", "", *targets_lines(measured)]
    if sections:
        lines += ["", *sections]
    lines += ["", "## The limits, each measured just before the endpoint it is compared with", ""]
    lines += _limits_table(measured)
    lines += [
        "",
        "## How the cores were shared during each run",
        "",
        "CPU cores used (of 2) by the web server (in all, then each of its two workers), "
        "the Celery worker and beat (worker), all PostgreSQL and Redis processes (whoever they "
        "served), wrk, and everything else.",
        "",
        "| endpoint | web (worker 1 / 2) | worker | postgres | redis | wrk | other |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_cores_row(m) for m in measured if m.result is not None]
    lines += ["", "## Load averages (1 minute) before → after", ""]
    lines += [
        f"- {m.label}: {m.load_before[0]:.2f} → {m.load_after[0]:.2f}"
        for m in measured
        if m.result is not None
    ]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
