"""Issue 27's targets for the learning filter, held to one run's figures."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from bench.spam.metrics import FLAGGED_SHARES, Figures

MAX_HAM_FLAGGED = 0.005  # at the default threshold, every label taught
MIN_SPAM_CAUGHT = 0.90
MAX_SCORING_P50_US = 50.0
_AT_LOWEST = FLAGGED_SHARES.index(0.001)


@frozen
class Check:
    name: str
    met: bool | None  # None: reported beside the others, held to no bound
    detail: str

    @property
    def status(self) -> str:
        return "REPORTED" if self.met is None else ("PASS" if self.met else "FAIL")


def _pct(share: float) -> str:
    return f"{100 * share:.2f}%"


def checks(
    intake_full: Figures,
    intake_errors: Figures,
    bogofilter_full: Figures,
    bogofilter_errors: Figures,
    scoring_p50_us: float,
) -> list[Check]:
    ours = intake_full.caught_at[_AT_LOWEST]
    theirs = bogofilter_full.caught_at[_AT_LOWEST]
    cutoff = intake_full.cutoff
    errors = intake_errors.cutoff
    return [
        Check(
            "spam caught at 0.1% of real messages flagged, at or above bogofilter's",
            ours >= theirs,
            f"intake {_pct(ours)}, bogofilter {_pct(theirs)}",
        ),
        Check(
            "default threshold, every label taught: at most 0.5% of real messages flagged",
            cutoff.ham_flagged <= MAX_HAM_FLAGGED,
            f"{_pct(cutoff.ham_flagged)} flagged",
        ),
        Check(
            "default threshold, every label taught: at least 90% of spam caught",
            cutoff.spam_caught >= MIN_SPAM_CAUGHT,
            f"{_pct(cutoff.spam_caught)} caught",
        ),
        Check(
            "scoring p50 at most 50 µs (CPU time)",
            scoring_p50_us <= MAX_SCORING_P50_US,
            f"{scoring_p50_us:.1f} µs",
        ),
        Check(
            "default threshold, mistakes corrected (untouched ones settled by the rule)",
            None,
            f"{_pct(errors.spam_caught)} caught, {_pct(errors.ham_flagged)} flagged; "
            f"at 0.1% flagged: intake {_pct(intake_errors.caught_at[_AT_LOWEST])}, "
            f"bogofilter {_pct(bogofilter_errors.caught_at[_AT_LOWEST])}",
        ),
    ]


def failed(results: Sequence[Check]) -> bool:
    return any(check.met is False for check in results)
