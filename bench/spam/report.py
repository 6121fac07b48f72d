"""The run's figures as a table, the filters side by side, and the targets."""

from __future__ import annotations

from collections.abc import Sequence

from bench.spam.metrics import FLAGGED_SHARES, Figures, percentile
from bench.spam.targets import Check
from bench.spam.timing import Timed


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%"


def table(rows: Sequence[tuple[str, Figures]]) -> str:
    """A Markdown table, one row per filter and mode (docs/scoring.md takes it as is)."""
    shares = " / ".join(f"{100 * share:g}%" for share in FLAGGED_SHARES)
    lines = [
        f"| filter, mode | spam caught with at most {shares} of real messages flagged "
        "| spam caught at its cutoff | real messages flagged at its cutoff | (1-ROCA)% |",
        "|---|---|---|---|---|",
    ]
    for name, figures in rows:
        caught = " / ".join(_pct(share) for share in figures.caught_at)
        lines.append(
            f"| {name} | {caught} | {_pct(figures.cutoff.spam_caught)} "
            f"| {100 * figures.cutoff.ham_flagged:.2f}% | {figures.one_minus_roca:.3f} |"
        )
    return "\n".join(lines)


def scoring(timed: Timed, how: str) -> str:
    """The scoring call's cost, CPU and wall clock, and what it was timed on."""
    trained = timed.evidence.own

    def spread(values: Sequence[float]) -> str:
        return f"p50 {percentile(values, 0.5):.1f}, p90 {percentile(values, 0.9):.1f}"

    return (
        f"scoring µs per submission: {spread(timed.cpu_us)} (wall clock: "
        f"{spread(timed.wall_us)}); {how}: {trained.spam_messages} spam, "
        f"{trained.ham_messages} ham, {len(trained.tokens)} tokens ({timed.taught_tokens} "
        "taught, the rest added to reach the target's workspace)"
    )


def targets(checks: Sequence[Check]) -> str:
    return "\n".join(f"{check.status:8} {check.name}: {check.detail}" for check in checks)
