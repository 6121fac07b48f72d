"""`make bench-spam`'s targets (bench/spam/targets.py), held to made-up figures, and the
table it prints (bench/spam/report.py)."""

from __future__ import annotations

from bench.spam.metrics import Figures, Verdicts
from bench.spam.report import table
from bench.spam.report import targets as targets_text
from bench.spam.targets import checks, failed


def figures(at_lowest: float, caught: float = 0.95, flagged: float = 0.004) -> Figures:
    return Figures(
        spam=100,
        ham=1000,
        caught_at=(at_lowest, 0.97, 0.98),
        cutoff=Verdicts(spam_caught=caught, ham_flagged=flagged),
        one_minus_roca=0.05,
    )


def test_every_target_met_passes_and_the_errors_mode_is_only_reported() -> None:
    found = checks(figures(0.95), figures(0.5), figures(0.95), figures(0.9), 40.0)
    assert [check.status for check in found] == ["PASS"] * 4 + ["REPORTED"]
    assert not failed(found)


def test_each_target_missed_fails_on_its_own() -> None:
    below_bogofilter = checks(figures(0.94), figures(0.5), figures(0.95), figures(0.9), 40.0)
    too_many_flagged = checks(
        figures(0.95, flagged=0.006), figures(0.5), figures(0.9), figures(0.9), 40.0
    )
    too_few_caught = checks(
        figures(0.95, caught=0.89), figures(0.5), figures(0.9), figures(0.9), 40.0
    )
    too_slow = checks(figures(0.95), figures(0.5), figures(0.9), figures(0.9), 50.5)
    for found, index in (
        (below_bogofilter, 0),
        (too_many_flagged, 1),
        (too_few_caught, 2),
        (too_slow, 3),
    ):
        assert [check.status == "FAIL" for check in found[:4]] == [i == index for i in range(4)]
        assert failed(found)


def test_the_table_and_the_targets_print_every_figure() -> None:
    text = table([("intake, every label taught", figures(0.95))])
    assert "| intake, every label taught | 95.0% / 97.0% / 98.0% | 95.0% | 0.40% | 0.050 |" in text
    found = checks(figures(0.95), figures(0.5), figures(0.95), figures(0.9), 40.0)
    assert "PASS     scoring p50 at most 50 µs (CPU time): 40.0 µs" in targets_text(found)
